"""Native MALT questions as operators ask them: references resolved on the graph, many wordings, one grammar."""
