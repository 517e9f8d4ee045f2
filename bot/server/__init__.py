"""The server and page: the aiohttp application, request checks, the page's static files,
the knowledge panel, and process-wide helpers (allocator, thread pool)."""
