"""Writing streams: laminate's events back out as any API's wire format.

The package is split so that the API packages can import the writer base without a cycle:
``writer`` (the base class and framing helpers) imports nothing from ``_apis``; ``encoder``
(the public surface) looks the writers up in the registry. This ``__init__`` imports
neither, on purpose.
"""
