"""The lab: dated runs, explorations, probes, campaign bars and drivers. The product never imports or reads it."""
