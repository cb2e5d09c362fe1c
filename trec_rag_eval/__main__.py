"""``python -m trec_rag_eval`` runs the command line."""

from trec_rag_eval.cli import main

main()
