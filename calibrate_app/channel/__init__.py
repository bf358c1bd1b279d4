"""The local channel: ``calibrate`` commands handed to the app that holds the database.

``wire`` (the socket's place, its private folder, the frames and the shared secret) and
``client`` (the CLI side, which hands a command line over). The app side that runs the
commands is :mod:`calibrate_app.command_server`, above both the channel and the CLI.
"""
