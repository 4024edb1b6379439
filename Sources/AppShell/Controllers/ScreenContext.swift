import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// How a screen reaches its session: the root controller, the defaults, the app's environment,
/// and what the shell offers a page (the form token, asset URLs, notifications) — never a global.
public final class ScreenContext {
    /// The session's root controller (reachable from every screen, never through a global).
    public unowned let root: RootController

    init(root: RootController) { self.root = root }

    /// The session's defaults, for the request being handled.
    public var defaults: DefaultsStore { root.defaults }

    /// The logged-in user's store (`RootController.userDefaults`); `nil` when the session is not
    /// logged in.
    public var userDefaults: DefaultsStore? { root.userDefaults }

    /// The app's environment: its values given at start and the shell's, typed
    /// (`context.environment.now`; `@Environment(\.now) var now` reads the same).
    public var environment: EnvironmentValues { root.environment }

    /// The form token of the session (empty outside a request).
    package var csrfToken: String {
        guard let session = root.session else { return "" }
        return root.services?.csrfToken(for: session) ?? ""
    }

    /// The URL of a file of the public directory, with its content version for long caching.
    public func assetURL(_ name: String) -> String { root.services?.assetURL(name) ?? "/" + name }

    /// An HTML form that sends `action` (with the session's token): it works without JavaScript
    /// (`POST /actions`), and the page's script sends it as JSON. `role` tells the script what the
    /// action means (`data-role`: back, close, rotates-session).
    public func form(
        _ action: String, label: String, fields: String = "", buttonClass: String = "", role: ActionRole? = nil
    ) -> String {
        let token = HTML.escape(csrfToken)
        let classAttribute = buttonClass.isEmpty ? "" : " class=\"\(HTML.escape(buttonClass))\""
        let roleAttribute = role.map { " data-role=\"\($0.rawValue)\"" } ?? ""
        return """
            <form method="post" action="/actions" data-action="\(HTML.escape(action))"\(roleAttribute)>
            <input type="hidden" name="csrf" value="\(token)">
            <input type="hidden" name="action" value="\(HTML.escape(action))">
            \(fields)<button type="submit"\(classAttribute)>\(HTML.escape(label))</button>
            </form>
            """
    }

    /// Sends the session's open pages a notification after `milliseconds` (a local notification on the
    /// web: the page shows it, and a click on it launches what it names).
    ///
    /// The notification belongs to the session as it is now: it is kept with the controllers (in
    /// the snapshot, so a restart still sends it) and scheduled once the request's changes are
    /// committed (a request that fails sends nothing); when it is due it goes out only if the
    /// session's id is still the one it was scheduled under — not after a logout or login (which
    /// rotate the id and drop it), not after the session expired or ended.
    ///
    /// A click on it launches `launch` (`launch(from:_:)` of the app coordinator, with the case's
    /// values: `.note(id: 1)`), or with `nil` only brings the app's page to the front.
    public func scheduleNotification<Launch: LaunchSources>(
        title: String, body: String, afterMilliseconds milliseconds: Int64, launch: Launch?
    ) {
        scheduleNotification(
            title: title, body: body, afterMilliseconds: milliseconds,
            launchParameters: launch.map(ScheduledNotification.launch))
    }

    /// A notification whose click only brings the app's page to the front (see
    /// `scheduleNotification(title:body:afterMilliseconds:launch:)`).
    public func scheduleNotification(title: String, body: String, afterMilliseconds milliseconds: Int64) {
        scheduleNotification(title: title, body: body, afterMilliseconds: milliseconds, launchParameters: nil)
    }

    private func scheduleNotification(
        title: String, body: String, afterMilliseconds milliseconds: Int64, launchParameters: JSON?
    ) {
        guard let services = root.services, let session = root.session, !root.isPreview else { return }
        let notification = ScheduledNotification(
            due: services.shell.clock() + milliseconds, title: title, body: body, launch: launchParameters)
        root.notifications.append(notification)
        root.snapshotIsStale = true
        session.afterCommit {
            services.shell.scheduleNew(notification, for: session.id, channel: services.channel)
        }
    }
}

/// What the shell lends a live app's controllers, given once when the app is first bound. The
/// shell is unowned: it outlives every request it serves, and it owns the sessions.
struct ShellServices {
    unowned let shell: Shell
    let channel: String

    /// The token for the session's id as it is now (after a rotation in this request, the new one).
    func csrfToken(for session: SessionContext) -> String { shell.tokens.token(for: session.id.bytes) }

    func assetURL(_ name: String) -> String { shell.assets.url(name) }
}
