/**
 * AppShell's client script (an ES module, no framework): it sends each form[data-action] to the
 * JSON API, follows the session's state and notifications on /api/events, swaps #screen with the
 * fragment the server renders, plays the transition, keeps the history in step with the
 * navigation stack, and shows reminders (through the service worker when it runs). On the offline
 * page it retries the connection and reloads when it is back. It registers the service worker.
 * See docs/browser-contract.md.
 */

const ACTIONS_URL = "/api/actions";
const EVENTS_URL = "/api/events";
const REQUEST_TIMEOUT_MS = 20000;
const RECONNECT_MIN_MS = 2000;
const RECONNECT_MAX_MS = 30000;
const SPLASH_RELOAD_MS = 1000;
const OFFLINE_RETRY_MIN_MS = 2000;
const OFFLINE_RETRY_MAX_MS = 15000;
/** The tag of a reminder's system notification: a new one replaces the one shown. */
const NOTIFICATION_TAG = "appshell-reminder";

/**
 * The classes each transition kind puts on the new content (#screen) and the old (the ghost),
 * and whether the old content leaves over the new one.
 */
const TRANSITIONS = Object.freeze({
  root: { enter: "anim-fade-in", leave: "anim-fade-out", ghostAbove: false },
  push: { enter: "anim-push-in", leave: "anim-push-out", ghostAbove: false },
  pop: { enter: "anim-pop-in", leave: "anim-pop-out", ghostAbove: true },
  present: { enter: "anim-present-in", leave: "anim-present-out", ghostAbove: false },
  dismiss: { enter: "anim-dismiss-in", leave: "anim-dismiss-out", ghostAbove: true },
});

/** @type {EventSource | null} */
let events = null;
let reconnectTimer = 0;
let reconnectDelay = RECONNECT_MIN_MS;
/** Actions run one at a time: each waits for the one before. */
let queue = Promise.resolve();
let pendingActions = 0;
/** Forms whose action is queued or on its way: a second submit of one of them is the same action. */
const pendingForms = new WeakSet();
/** Names the history entries this document pushed (a reloaded page is another document). */
const DOCUMENT_ID = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
/** Back steps the page took itself (an in-page pop or dismiss): their popstate sends nothing. */
let ownBackSteps = 0;
/** @type {(() => void) | null} Ends the running screen animation at once. */
let finishAnimation = null;
/** The fragment last put into #screen, to skip a swap that would change nothing. */
let lastHtml = null;
/** @type {"notification" | "error" | null} What the banner shows. */
let bannerKind = null;
/** @type {Notification | null} The system notification of the last reminder, while shown. */
let systemNotification = null;

/** The element that holds the visible screen. */
function screenElement() {
  return document.getElementById("screen");
}

/** The version of the state the page shows (-1 when unknown, so any state is newer). */
function pageVersion() {
  const version = Number.parseInt(screenElement()?.dataset.version ?? "", 10);
  return Number.isFinite(version) ? version : -1;
}

/** Whether `value` is a state payload (a JSON object with a numeric version). */
function isPayload(value) {
  return typeof value === "object" && value !== null && Number.isFinite(value.version);
}

/** The payload's navigation stack as the page writes it in data-stack. */
function stackText(payload) {
  return Array.isArray(payload.stack) ? payload.stack.join(" ") : "";
}

/** Whether the user asked the system for less motion. */
function prefersReducedMotion() {
  return window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
}

/** Whether the payload shows another screen, stack or modal screen than the page does. */
function changesScreen(screen, payload) {
  return (
    screen.dataset.screen !== String(payload.screen ?? "") ||
    (screen.dataset.stack ?? "") !== stackText(payload) ||
    (screen.dataset.presented ?? "") !== String(payload.presented ?? "")
  );
}

/**
 * Applies a state payload when it is newer than the page (or as new, with `allowSame`, for an
 * error answer that re-renders the screen, e.g. a failed login; or whatever its version, with
 * `anyVersion`, for the state of another session): swaps #screen, its data attributes and the
 * title, plays the transition, updates the history and moves focus.
 * Returns whether it applied the payload.
 */
function applyPayload(payload, { allowSame = false, anyVersion = false, historyMode = "auto" } = {}) {
  const screen = screenElement();
  const current = pageVersion();
  const newer = anyVersion || payload.version > current || (allowSame && payload.version === current);
  if (!screen || !newer) return false;
  if (typeof payload.html !== "string") {
    reloadAt(payload.url);
    return true;
  }
  const changed = changesScreen(screen, payload);
  if (!changed && !allowSame && payload.html === lastHtml) {
    writeAttributes(screen, payload);
    updateHistory(payload, changed, historyMode);
    return true;
  }
  stopAnimation();
  const active = document.activeElement;
  const focusWasInScreen = !active || active === document.body || screen.contains(active);
  const kind = payload.transition?.kind;
  const animate =
    changed && payload.transition?.animated === true && Object.hasOwn(TRANSITIONS, kind) && !prefersReducedMotion();
  const ghost = animate ? detachOldContent(screen) : null;
  screen.innerHTML = payload.html;
  lastHtml = payload.html;
  writeAttributes(screen, payload);
  if (typeof payload.title === "string") document.title = payload.title;
  updateHistory(payload, changed, historyMode);
  if (ghost) animateSwap(screen, ghost, TRANSITIONS[kind]);
  if (changed) {
    hideBanner("error");
    // A reminder belongs to the session state that asked for it: a login or logout ends it.
    if (kind === "root") dismissNotifications();
    window.scrollTo(0, 0);
  }
  if (changed || focusWasInScreen) focusHeading(screen);
  return true;
}

/** Writes the payload's screen, version, URL, stack and modal screen on #screen. */
function writeAttributes(screen, payload) {
  screen.dataset.screen = String(payload.screen ?? "");
  screen.dataset.version = String(payload.version);
  if (typeof payload.url === "string") screen.dataset.url = payload.url;
  screen.dataset.stack = stackText(payload);
  screen.dataset.presented = String(payload.presented ?? "");
  if (typeof payload.starting === "boolean") screen.dataset.starting = payload.starting ? "true" : "";
}

/** Whether the app is still starting (the server marks it `data-starting`, e.g. on the splash). */
function isStarting() {
  return screenElement()?.dataset.starting === "true";
}

/** Loads `url` (a same-site path) or reloads: for a payload that came without its fragment. */
function reloadAt(url) {
  const target = sameOriginURL(url);
  if (target) window.location.replace(target.href);
  else window.location.reload();
}

/** `url` resolved against the page when it stays on this site, else null. */
function sameOriginURL(url) {
  if (typeof url !== "string" || url === "") return null;
  try {
    const resolved = new URL(url, window.location.href);
    return resolved.origin === window.location.origin ? resolved : null;
  } catch {
    return null;
  }
}

/**
 * Follows the stack in the history: a push or a present that changed the screen adds an entry (so
 * the back button pops or dismisses it); a pop or a dismiss sent from the page (its Back or Close
 * button) on an entry this page added goes back to the entry below, as the back button would;
 * anything else replaces the current entry (a replace keeps the address when the screen did not
 * change and the path is the same, e.g. /login?next=…). `historyMode: "replace"` (the back button
 * already moved the history) always replaces.
 */
function updateHistory(payload, changed, historyMode) {
  const target = sameOriginURL(payload.url);
  if (!target) return;
  const kind = payload.transition?.kind;
  const state = { version: payload.version };
  if (historyMode !== "replace" && changed && (kind === "push" || kind === "present")) {
    window.history.pushState({ ...state, pushedBy: DOCUMENT_ID }, "", target.href);
    return;
  }
  const ownEntry = window.history.state?.pushedBy === DOCUMENT_ID;
  if (historyMode !== "replace" && changed && (kind === "pop" || kind === "dismiss") && ownEntry) {
    ownBackSteps += 1;
    window.history.back();
    return;
  }
  const keep = !changed && target.pathname === window.location.pathname;
  window.history.replaceState(state, "", keep ? window.location.href : target.href);
}

/** Puts the address back to the screen's URL when the browser moved it but the screen stayed. */
function syncAddress() {
  const target = sameOriginURL(screenElement()?.dataset.url);
  if (!target || target.pathname === window.location.pathname) return;
  window.history.replaceState({ version: pageVersion() }, "", target.href);
}

/** Moves #screen's old content into an inert, hidden-from-AT copy laid over it while it animates. */
function detachOldContent(screen) {
  const rect = screen.getBoundingClientRect();
  const origin = document.body.getBoundingClientRect();
  const ghost = document.createElement("div");
  ghost.className = "screen-ghost";
  ghost.setAttribute("aria-hidden", "true");
  ghost.setAttribute("inert", "");
  ghost.dataset.presented = screen.dataset.presented ?? "";
  ghost.style.setProperty("top", `${rect.top - origin.top}px`);
  ghost.style.setProperty("left", `${rect.left - origin.left}px`);
  ghost.style.setProperty("width", `${rect.width}px`);
  ghost.style.setProperty("height", `${rect.height}px`);
  ghost.append(...screen.childNodes);
  document.body.append(ghost);
  return ghost;
}

/**
 * Plays one transition: the new content enters on #screen while the ghost leaves; ends on the
 * leading element's animationend, or after its duration at the latest, so neither the old
 * content stays nor the new one stays hidden.
 */
function animateSwap(screen, ghost, transition) {
  ghost.classList.toggle("is-above", transition.ghostAbove);
  ghost.classList.add(transition.leave);
  screen.classList.add("is-animating", transition.enter);
  const leader = transition.ghostAbove ? ghost : screen;
  let timer = 0;
  /** An animation of the leading element ended (not one of its children's). */
  const onEnd = (event) => {
    if (event.target === leader) finish();
  };
  /** Removes the ghost and the classes, once. */
  const finish = () => {
    if (finishAnimation !== finish) return;
    finishAnimation = null;
    window.clearTimeout(timer);
    leader.removeEventListener("animationend", onEnd);
    leader.removeEventListener("animationcancel", onEnd);
    screen.classList.remove("is-animating", transition.enter);
    if (screen.classList.length === 0) screen.removeAttribute("class");
    ghost.remove();
  };
  finishAnimation = finish;
  leader.addEventListener("animationend", onEnd);
  leader.addEventListener("animationcancel", onEnd);
  timer = window.setTimeout(finish, animationMilliseconds(leader) + 100);
}

/** Ends the running screen animation at once (a newer state arrived). */
function stopAnimation() {
  finishAnimation?.();
}

/** The longest delay plus duration of the element's CSS animations, in milliseconds. */
function animationMilliseconds(element) {
  const style = window.getComputedStyle(element);
  const durations = style.animationDuration.split(",").map(parseTime);
  const delays = style.animationDelay.split(",").map(parseTime);
  return Math.max(0, ...durations.map((duration, index) => duration + (delays[index] ?? 0)));
}

/** A CSS time ("0.3s", "250ms") in milliseconds. */
function parseTime(text) {
  const value = Number.parseFloat(text);
  if (!Number.isFinite(value)) return 0;
  return text.trim().endsWith("ms") ? value : value * 1000;
}

/** Focuses the screen's h1 (made focusable when the server did not). */
function focusHeading(screen) {
  const heading = screen.querySelector("h1");
  if (!heading) return;
  if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
  heading.focus({ preventScroll: true });
}

/** The form's fields as a JSON object for the API: every field but `csrf`, last value wins. */
function formFields(form, submitter) {
  let data;
  try {
    data = submitter?.name ? new FormData(form, submitter) : new FormData(form);
  } catch {
    data = new FormData(form);
  }
  const fields = { action: form.dataset.action };
  for (const [name, value] of data) {
    if (name !== "csrf" && typeof value === "string") fields[name] = value;
  }
  return fields;
}

/** Runs `task` after every action queued before it; the page shows it is busy meanwhile. */
function enqueue(task) {
  pendingActions += 1;
  document.documentElement.classList.add("is-busy");
  const run = queue.then(task).catch(reportFailure).finally(() => {
    pendingActions -= 1;
    if (pendingActions === 0) document.documentElement.classList.remove("is-busy");
  });
  queue = run;
  return run;
}

/** Logs a failure of the script itself and tells the user in the banner. */
function reportFailure(error) {
  console.error("appshell:", error);
  showError("Something went wrong. Reload the page to try again.");
}

/** Sends one action (`{"action": …, …}`) to the API and applies the answer. */
async function performAction(body, { historyMode = "auto" } = {}) {
  // After an action whose form says it gives the session a new id (a login, a logout), the event
  // stream is opened again with it; the form is looked up now, before the answer replaces it.
  const rotatesSession = actionForm(body.action, "rotates-session") !== null;
  let response;
  try {
    response = await fetch(ACTIONS_URL, requestOptions(body));
  } catch {
    // Said, never silent: offline, nothing was sent, and the screen stays as it was.
    showError(
      navigator.onLine === false
        ? "You are offline: this was not sent. Try again when the connection is back."
        : "The server cannot be reached. Check the connection and try again.",
    );
    return;
  }
  const data = await readJSON(response);
  if (isPayload(data) && data.version < pageVersion()) {
    // Older than the page: the session was replaced (it expired); the server renders the truth.
    reloadAt(data.url);
  } else if (isPayload(data)) {
    applyPayload(data, { allowSame: !response.ok, historyMode });
    if (response.ok) hideBanner("error");
    else reportActionError(data.error);
  } else if (!response.ok) {
    showError(typeof data?.error === "string" ? data.error : `The server answered ${response.status}.`);
  }
  if (response.ok && rotatesSession) restartEvents();
}

/** The fetch options of an action: JSON, asking for the fragment, given up after a while. */
function requestOptions(body) {
  const options = {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-AppShell-Fragment": "1",
      Accept: "application/json",
    },
    body: JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  };
  if (typeof AbortSignal.timeout === "function") options.signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
  return options;
}

/** The answer's JSON body, or null when it has none. */
async function readJSON(response) {
  if (!(response.headers.get("Content-Type") ?? "").includes("json")) return null;
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/** Shows an action's error in the banner unless the screen already says it (the login alert). */
function reportActionError(error) {
  if (typeof error !== "string" || error === "") return;
  const alert = screenElement()?.querySelector('[role="alert"]');
  if (alert && alert.textContent.trim() === error.trim()) return;
  showError(error);
}

/** Intercepts a form[data-action] submit and sends it as JSON (one action at a time). */
function onSubmit(event) {
  const form = event.target;
  if (event.defaultPrevented || !(form instanceof HTMLFormElement) || !form.matches("form[data-action]")) return;
  event.preventDefault();
  // A second submit of a form already on its way (a double click, Enter pressed twice) is the same
  // action; any other form is queued behind what is pending (a back press, a launch) and sent in
  // its turn — never dropped. If the screen showing by then does not offer it, the server says so.
  if (pendingForms.has(form)) return;
  const submitter = event.submitter instanceof HTMLElement ? event.submitter : null;
  const fields = formFields(form, submitter);
  // Asked here, inside the user's gesture, before anything is awaited.
  // (The server marks the actions that schedule a notification: `data-role="notifies"`.)
  const permission = form.dataset.role === "notifies" ? askNotificationPermission() : null;
  pendingForms.add(form);
  submitter?.setAttribute("aria-disabled", "true");
  enqueue(async () => {
    try {
      if (permission) await permission;
      await performAction(fields);
    } finally {
      pendingForms.delete(form);
      submitter?.removeAttribute("aria-disabled");
    }
  });
}

/** Asks for permission to notify when the user has not decided yet; resolves with the answer. */
function askNotificationPermission() {
  if (!("Notification" in window) || Notification.permission !== "default") return Promise.resolve();
  return new Promise((resolve) => {
    try {
      // Older Safari takes a callback and returns nothing; the others return a promise.
      const answer = Notification.requestPermission(resolve);
      if (answer && typeof answer.then === "function") answer.then(resolve, () => resolve("default"));
    } catch {
      resolve("default");
    }
  });
}

/**
 * The browser's back (or forward) button: `dismiss` while a screen is presented, else `pop`
 * while the stack holds more than one screen, else nothing but putting the address back.
 * Decided when the action's turn comes, so two quick backs never pop past the root. A popstate of
 * the page's own back step (after an in-page pop or dismiss, see `updateHistory`) sends nothing.
 */
function onPopState() {
  if (ownBackSteps > 0) {
    // The page went back itself after a pop or dismiss it sent: the screen is shown already.
    ownBackSteps -= 1;
    syncAddress();
    return;
  }
  enqueue(async () => {
    const action = historyAction();
    if (action) await performAction({ action }, { historyMode: "replace" });
    syncAddress();
  });
}

/**
 * What the back button asks of the page as it is: the screen's close action while one is
 * presented, else its back action on a pushed screen, else nothing. The actions are those whose
 * forms the server marked `data-role="close"` and `data-role="back"`.
 */
function historyAction() {
  const screen = screenElement();
  if (!screen) return null;
  if ((screen.dataset.presented ?? "") !== "") return actionForm(null, "close")?.dataset.action ?? null;
  const stack = (screen.dataset.stack ?? "").split(/\s+/).filter(Boolean);
  return stack.length > 1 ? (actionForm(null, "back")?.dataset.action ?? null) : null;
}

/** The page's form with `role` (`data-role`) — for the action `name` when given — or null. */
function actionForm(name, role) {
  for (const form of document.querySelectorAll("form[data-role]")) {
    if (form.dataset.role === role && (name === null || form.dataset.action === name)) return form;
  }
  return null;
}

/** Opens the session's event stream (state changes and reminders). */
function connectEvents() {
  if (!("EventSource" in window)) return;
  window.clearTimeout(reconnectTimer);
  const source = new EventSource(eventsURL());
  source.addEventListener("open", () => {
    reconnectDelay = RECONNECT_MIN_MS;
  });
  source.addEventListener("state", onStateEvent);
  source.addEventListener("notification", onNotificationEvent);
  source.addEventListener("error", () => onEventsError(source));
  events = source;
}

/**
 * The event stream's URL. A page rendered while the app starts (`data-starting`, the splash) at a
 * deep link (its data-url, e.g. /main/second) passes that URL on as `next`, so that the splash
 * turns into /login?next=… (or that page).
 */
function eventsURL() {
  const screen = screenElement();
  const target = isStarting() ? (screen?.dataset.url ?? "") : "";
  if (!target || target === "/") return EVENTS_URL;
  return `${EVENTS_URL}?next=${encodeURIComponent(target)}`;
}

/** Closes the event stream and opens a new one (after the session id changed). */
function restartEvents() {
  closeEvents();
  connectEvents();
}

/** Closes the event stream, if open. */
function closeEvents() {
  window.clearTimeout(reconnectTimer);
  events?.close();
  events = null;
}

/**
 * A stream error: quiet. EventSource reconnects by itself; only when it gave up (closed) does the
 * page try again later — or, while the app starts (the splash), reload as the no-script page would.
 */
function onEventsError(source) {
  if (source !== events || source.readyState !== EventSource.CLOSED) return;
  closeEvents();
  if (isStarting()) {
    reconnectTimer = window.setTimeout(() => window.location.reload(), SPLASH_RELOAD_MS);
    return;
  }
  reconnectTimer = window.setTimeout(connectEvents, reconnectDelay);
  reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS);
}

/**
 * `event: state` (`id: <epoch>.<version>`): applies the payload when it is newer than the page,
 * or whatever its version when its epoch is not the page's: the session the page showed is gone
 * (a restart that lost it, an expiry, a replaced session) and this is the state of the one that
 * took its place, whose versions count afresh.
 */
function onStateEvent(event) {
  const payload = parseJSON(event.data);
  if (!isPayload(payload)) return;
  const epoch = eventEpoch(event.lastEventId);
  const screen = screenElement();
  const known = screen?.dataset.epoch ?? "";
  applyPayload(payload, { anyVersion: epoch !== "" && known !== "" && epoch !== known });
  if (screen && epoch !== "") screen.dataset.epoch = epoch;
}

/** The epoch of a state event's id (`<epoch>.<version>`), or "" when it has none. */
function eventEpoch(id) {
  const dot = typeof id === "string" ? id.lastIndexOf(".") : -1;
  return dot > 0 ? id.slice(0, dot) : "";
}

/**
 * `event: notification` (`{"title", "body", "launch"?}`): a system notification if allowed — shown by the
 * service worker when one runs, so that it shows while the tab is in the background and a click
 * opens the app even after the tab is gone — else the banner.
 */
async function onNotificationEvent(event) {
  const message = parseJSON(event.data);
  if (typeof message !== "object" || message === null) return;
  const title = typeof message.title === "string" ? message.title : document.title;
  const body = typeof message.body === "string" ? message.body : "";
  const launch = launchParameters(message.launch);
  if (await showWorkerNotification(title, body, launch)) return;
  if (!showSystemNotification(title, body, launch)) showNotificationBanner(title, body, launch);
}

/**
 * What a click on a notification launches: the `launch` action's parameters the server gave it
 * (`{source: "note", id: 1}`, the app's own names), or null when it launches nothing.
 */
function launchParameters(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  return typeof value.source === "string" ? value : null;
}

/**
 * Shows the reminder with `ServiceWorkerRegistration.showNotification` when permission is granted
 * and a worker is active; returns whether it did. Its click goes to the worker (see
 * Public/service-worker.js), which focuses this window and posts `{type: "launch", launch}`.
 */
async function showWorkerNotification(title, body, launch) {
  if (!("Notification" in window) || Notification.permission !== "granted") return false;
  const registration = await workerRegistration();
  if (!registration?.active || typeof registration.showNotification !== "function") return false;
  try {
    await registration.showNotification(title, { body, tag: NOTIFICATION_TAG, data: { launch } });
    return true;
  } catch {
    return false;
  }
}

/** The service worker's registration for this site, or null. */
async function workerRegistration() {
  if (!("serviceWorker" in navigator)) return null;
  try {
    return (await navigator.serviceWorker.getRegistration("/")) ?? null;
  } catch {
    return null;
  }
}

/** A message from the service worker: `{type: "launch", launch}` after a click on its notification. */
function onWorkerMessage(event) {
  const data = event.data;
  if (typeof data === "object" && data !== null && data.type === "launch") {
    const launch = launchParameters(data.launch);
    if (launch) launchFromNotification(launch);
  }
}

/** `text` parsed as JSON, or null. */
function parseJSON(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Shows a Web Notification when permission is granted; returns whether it did. */
function showSystemNotification(title, body, launch) {
  if (!("Notification" in window) || Notification.permission !== "granted") return false;
  try {
    const notification = new Notification(title, { body, tag: NOTIFICATION_TAG });
    notification.addEventListener("click", () => {
      // One taken away at a login or logout launches nothing.
      const current = systemNotification === notification;
      window.focus();
      notification.close();
      if (current && launch) launchFromNotification(launch);
    });
    notification.addEventListener("close", () => {
      if (systemNotification === notification) systemNotification = null;
    });
    systemNotification = notification;
    return true;
  } catch {
    // Some mobile browsers only notify through a service worker.
    return false;
  }
}

/** Takes away the reminder shown (banner or system notification): the session it was for ended. */
function dismissNotifications() {
  hideBanner("notification");
  const notification = systemNotification;
  systemNotification = null;
  notification?.close();
  workerRegistration()
    .then((registration) => registration?.getNotifications({ tag: NOTIFICATION_TAG }))
    .then((shown) => shown?.forEach((each) => each.close()))
    .catch(() => {});
}

/**
 * Sends the launch action the page names (`data-launch-action`) with what the notification
 * launches (`launch`: its source and parameters, as the server gave them).
 */
function launchFromNotification(launch) {
  hideBanner("notification");
  const action = screenElement()?.dataset.launchAction;
  if (action) enqueue(() => performAction({ ...launch, action }));
}

/** Shows the reminder in #banner, with an "Open" button when it launches something. */
function showNotificationBanner(title, body, launch) {
  const open = launch ? [makeButton("Open", "banner-open", () => launchFromNotification(launch))] : [];
  fillBanner("notification", title, body, open);
}

/** Shows an error in #banner. */
function showError(text) {
  fillBanner("error", "", text, []);
}

/** Fills and shows #banner: a title, a text, the given buttons and a close button. */
function fillBanner(kind, title, body, buttons) {
  const banner = document.getElementById("banner");
  if (!banner) return;
  const text = document.createElement("p");
  text.className = "banner-text";
  if (title) {
    const strong = document.createElement("strong");
    strong.className = "banner-title";
    strong.textContent = title;
    text.append(strong, " ");
  }
  text.append(body);
  const close = makeButton("×", "banner-close", () => hideBanner());
  close.setAttribute("aria-label", kind === "error" ? "Dismiss the message" : "Dismiss the notification");
  const actions = document.createElement("div");
  actions.className = "banner-actions";
  actions.append(...buttons, close);
  banner.hidden = false;
  banner.classList.toggle("is-error", kind === "error");
  banner.replaceChildren(text, actions);
  bannerKind = kind;
}

/** A button with a label, a class and a click handler. */
function makeButton(label, className, onClick) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.textContent = label;
  button.addEventListener("click", onClick);
  return button;
}

/** Hides #banner (only when it shows `kind`, if given), keeping focus on the page. */
function hideBanner(kind) {
  const banner = document.getElementById("banner");
  if (!banner || banner.hidden || (kind && bannerKind !== kind)) return;
  const hadFocus = banner.contains(document.activeElement);
  banner.hidden = true;
  banner.replaceChildren();
  banner.classList.remove("is-error");
  bannerKind = null;
  const screen = screenElement();
  if (hadFocus && screen) focusHeading(screen);
}

/** After the page comes back from the back-forward cache: reopen the stream it closed. */
function onPageShow(event) {
  if (event.persisted && !events) connectEvents();
}

/** Before the page goes into the back-forward cache: close the stream. */
function onPageHide(event) {
  if (event.persisted) closeEvents();
}

/** Back online: reopen the stream if it was given up. */
function onOnline() {
  if (!events) connectEvents();
}

/**
 * A page opened from a launch link (`?launch=…`) carries the launch as the #launch form, since a
 * GET changes nothing: the script sends it at once, and takes `launch` out of the address.
 */
function sendLaunch() {
  const form = document.getElementById("launch");
  if (!(form instanceof HTMLFormElement)) return;
  const fields = formFields(form, null);
  (form.closest("aside") ?? form).remove();
  const url = new URL(window.location.href);
  url.searchParams.delete("launch");
  window.history.replaceState(window.history.state, "", url.href);
  enqueue(() => performAction(fields));
}

/**
 * Registers the service worker the page names (`<html data-service-worker>`), once the page has
 * loaded, so that it does not compete with the page's own requests.
 */
function registerWorker() {
  const url = document.documentElement.dataset.serviceWorker;
  if (!url || !("serviceWorker" in navigator)) return;
  const register = () => {
    navigator.serviceWorker.register(url, { scope: "/" }).catch((error) => {
      console.warn("appshell: the service worker was not registered:", error);
    });
  };
  if (document.readyState === "complete") register();
  else window.addEventListener("load", register, { once: true });
}

/**
 * The offline page (`main#offline`, shown by the service worker at the URL of a page it could
 * not load): it asks `data-probe` now and then (sooner after an `online` event or a press of
 * `[data-retry]`) and reloads once the server answers, which shows the screen of that URL.
 */
function startOffline(main) {
  let delay = OFFLINE_RETRY_MIN_MS;
  let timer = 0;
  let checking = false;
  const check = async () => {
    window.clearTimeout(timer);
    if (checking) return;
    checking = true;
    try {
      const probe = main.dataset.probe || "/";
      const response = await fetch(probe, { method: "HEAD", cache: "no-store", credentials: "omit" });
      if (response.ok) {
        window.location.reload();
        return;
      }
    } catch {
      // Still offline.
    } finally {
      checking = false;
    }
    timer = window.setTimeout(check, delay);
    delay = Math.min(delay * 2, OFFLINE_RETRY_MAX_MS);
  };
  const now = () => {
    delay = OFFLINE_RETRY_MIN_MS;
    check();
  };
  main.querySelector("[data-retry]")?.addEventListener("click", now);
  window.addEventListener("online", now);
  timer = window.setTimeout(check, delay);
}

/** Starts the client on an AppShell page (one with #screen) or the offline page. */
function start() {
  registerWorker();
  const offline = document.getElementById("offline");
  if (offline) {
    startOffline(offline);
    return;
  }
  const screen = screenElement();
  if (!screen) return;
  navigator.serviceWorker?.addEventListener("message", onWorkerMessage);
  sendLaunch();
  window.history.replaceState({ version: pageVersion() }, "", window.location.href);
  document.addEventListener("submit", onSubmit);
  window.addEventListener("popstate", onPopState);
  window.addEventListener("pageshow", onPageShow);
  window.addEventListener("pagehide", onPageHide);
  window.addEventListener("online", onOnline);
  connectEvents();
}

start();
