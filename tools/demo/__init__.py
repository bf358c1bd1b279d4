"""Authoring tools of the demo: the content as data, the generator and the verdict recorder."""
