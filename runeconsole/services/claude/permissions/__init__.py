"""Permission requests: the hook's side, the files, the operator's standing rules and
decisions, auto mode's refusals."""
