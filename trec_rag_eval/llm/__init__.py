"""Asking an LLM: test queries written from documents, and relevance judgments for unjudged documents.

``client`` talks to any OpenAI-compatible chat endpoint (settings, concurrency, retries, the resumable
progress file, API keys kept out of every message); ``queries`` writes a dataset of generated test
queries (``generate-queries``); ``judging`` grades the unjudged documents of runs and measures how far
the model agrees with the humans (``judge``). Nothing is imported here: openai loads only when a
request is sent.
"""
