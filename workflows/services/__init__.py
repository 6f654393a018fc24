"""Workflow services, by subject: plans, runs, reviews and the events they send.

Each service owns its transaction and writes its audit rows with its change. Reads that
build snapshots live in `workflows.selectors`.
"""
