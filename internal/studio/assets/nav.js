// Navigation state shared by the pages: the hash router's entry point and the signal that
// ends a page's requests and streams when the user leaves it.

/** Aborted when the user leaves the page; streams and polls of a page use its signal. */
export let pageAbort = new AbortController();

/** Starts a new page: aborts the previous page's requests and returns the new signal. */
export function newPage() {
  pageAbort.abort();
  pageAbort = new AbortController();
  return pageAbort.signal;
}

let handler = async () => {};
/** Sets the function that renders the page of the current hash. */
export function setRouter(fn) { handler = fn; }

/** Renders the page of the current hash again. */
export function route() { return handler(); }

/** Goes to a hash route (re-rendering when it is the current one). */
export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}
