"""Evaluation: measures computed over aligned queries and aggregated, in memory or in pieces."""
