"""Annie's runtime: the server, audio in and out, the session loop, tools and the command line."""
