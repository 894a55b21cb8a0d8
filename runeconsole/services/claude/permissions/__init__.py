"""Permission requests: the relay, hook side (``relay``), the request and decision files
(``files``), the operator's standing rules (``rules``), the requests read, listed and
decided by the operator (``service``), auto mode's refusals (``denials``)."""
