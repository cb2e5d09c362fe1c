"""Checks of an evaluation: against ir-measures (crosscheck), against published scores (validate), and
of RAG data (rag)."""
