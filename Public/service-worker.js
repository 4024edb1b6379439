/**
 * AppShell's service worker (served at /sw.js, scope /, after the lines that define SHELL_VERSION,
 * SHELL_FILES and OFFLINE_URL; see the documentation, "The browser and the web app").
 *
 * - It precaches the shell — the versioned stylesheet and script, the icons, the splash and the
 *   offline page — fetched without cookies, in a cache named by the shell's version; a new version
 *   is a new worker, which fills a new cache, takes over, and deletes every other cache.
 * - It answers only requests for those files, from that cache. It never stores anything else: not
 *   a page (they are the session's), not /api/*, not anything sent with a cookie — on a shared
 *   computer, nothing of one user is left for the next.
 * - A page it cannot load (the network is off) is answered with the offline page, at the page's
 *   own URL, so that the offline page's retry reloads the right screen.
 * - A click on a reminder it showed focuses the app's window and tells it to launch what the
 *   reminder names (seed 002: `{source, ...parameters}`, the app's own names), or opens one at
 *   the launch's URL (`/?launch=<source>&<parameter>=<value>…`).
 */

/* global SHELL_VERSION, SHELL_FILES, OFFLINE_URL */

const CACHE = `appshell-shell-${SHELL_VERSION}`;
const SHELL = new Set(SHELL_FILES);

self.addEventListener("install", (event) => {
  event.waitUntil(precache());
});

self.addEventListener("activate", (event) => {
  event.waitUntil(activate());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    event.respondWith(navigate(event));
  } else if (SHELL.has(url.pathname + url.search)) {
    event.respondWith(fromShell(request));
  }
  // Anything else (the API, the event stream, other files) goes to the network, untouched.
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const launch = event.notification.data?.launch;
  event.waitUntil(openApp(typeof launch?.source === "string" ? launch : null));
});

/** Fetches the shell into this version's cache, without cookies and past the HTTP cache. */
async function precache() {
  const cache = await caches.open(CACHE);
  await cache.addAll(SHELL_FILES.map((url) => new Request(url, { credentials: "omit", cache: "reload" })));
  await self.skipWaiting();
}

/** Deletes every cache but this version's, lets the page's own request run alongside, takes over. */
async function activate() {
  const names = await caches.keys();
  await Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name)));
  // Navigation preload: the browser sends the page's request at once, while the worker starts.
  await self.registration.navigationPreload?.enable();
  await self.clients.claim();
}

/** A page: always from the server (it is the session's); the offline page when it is unreachable. */
async function navigate(event) {
  try {
    const preloaded = await event.preloadResponse;
    if (preloaded) return preloaded;
    return await fetch(event.request);
  } catch {
    const offline = await caches.match(OFFLINE_URL, { cacheName: CACHE });
    return offline ?? Response.error();
  }
}

/** A file of the shell: from the cache; from the network only if the cache lost it. */
async function fromShell(request) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(request.url);
  return cached ?? fetch(request);
}

/**
 * Brings the app to the front for a notification: its window, focused and told to launch, or a
 * new one at the launch URL (the server carries the launch to the page, which sends it).
 */
async function openApp(launch) {
  const windows = await self.clients.matchAll({ type: "window" });
  const target = windows.find((client) => client.focused) ?? windows[0];
  if (target) {
    const focused = await target.focus().catch(() => target);
    if (launch) (focused ?? target).postMessage({ type: "launch", launch });
    return;
  }
  await self.clients.openWindow(launch ? launchURL(launch) : "/");
}

/** The page URL that carries `launch`: `/?launch=note&id=1`. */
function launchURL(launch) {
  const query = new URLSearchParams({ launch: launch.source });
  for (const [name, value] of Object.entries(launch)) {
    if (name !== "source" && value !== null && typeof value !== "object") query.append(name, String(value));
  }
  return `/?${query}`;
}
