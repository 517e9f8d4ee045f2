"""Voice: endpointing, chunking, the WebRTC server, barge-in and the page in a real browser."""
