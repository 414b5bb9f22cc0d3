// Placeholder: the page's only file that talks to the backend. The real one replaces this.
