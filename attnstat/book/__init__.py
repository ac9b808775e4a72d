"""The book's build machinery, kept out of the library API: the figure registry and `reproduce` (`attnstat.book.figures`)."""
