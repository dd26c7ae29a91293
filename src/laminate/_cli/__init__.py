"""The command line: replay, record, serve and the demo."""
