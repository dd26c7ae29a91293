"""One module per wire format: a stream handler, a complete-body parser, a stop-reason
table and the request shapes of tools. Provider dicts never leave these modules."""
