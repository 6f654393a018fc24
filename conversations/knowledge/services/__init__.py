"""Knowledge services by subject: `ingestion` (writes), `index` (the in-memory index), `retrieval` (search).

Import from the module you need; nothing is re-exported here.
"""
