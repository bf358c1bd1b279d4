"""Judge configs, providers, runner and calibration statistics."""
