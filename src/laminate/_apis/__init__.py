"""One package per wire format ("API"): everything that API means (its stream handler,
complete-body reader, stop reasons, detection hints, request shapes and writers), and one
registry record for each. Provider dicts never leave these packages."""
