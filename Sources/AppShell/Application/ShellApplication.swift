import AppShellHTTP
import AppShellJSON
import AppShellSessions

/// What an app built on AppShell provides: its app coordinator, the screen a session shows
/// first, its start-up work, and its page URLs. The framework derives the rest from the app
/// coordinator's type — the screens and coordinators it shows (`Coordinator.shows`), their known
/// actions, and how a session's controllers come back from a snapshot. The demo app is one.
public protocol ShellApplication: Sendable {
    /// The app coordinator's type: the top of every session's coordinator tree.
    associatedtype RootCoordinator: ApplicationCoordinator
    /// The screen a new session shows first (the splash), which the app coordinator shows.
    func makeFirstScreen() -> ViewController
    /// The app coordinator of a session whose controllers `root` holds, not started: for a new
    /// session (the framework then starts it), or one rebuilt from its snapshot (the framework then
    /// rebuilds its children around the restored screens).
    func makeCoordinator(root: RootController) -> RootCoordinator
    /// The work a new session does before it routes (the splash's), or `nil` for none.
    var startup: StartupWork? { get }
    /// The app's values for its screens and coordinators, under its own keys (its services, its
    /// settings: `EnvironmentValues`), given once: the shell reads them when it is made, adds its
    /// own (`clock`) and lends them to every session's root. By default none (each key's default).
    var environmentValues: EnvironmentValues { get }
    /// The URLs of the app's pages besides `/` (`/notes/:id` takes any segment as `id`). By
    /// default none; a `RoutedApplication` derives them from its routes.
    var pagePaths: [String] { get }
    /// The URL that shows what `app` shows now, e.g. `/main/list`.
    func url(of app: LiveApp) -> String
    /// Makes `app` show what `path` names, without animation, and says whether to render it,
    /// redirect (a logged-out user asking for a logged-in page) or answer 404. `next` is the
    /// same-site path the user asked for before being sent to log in, if any.
    func open(path: String, next: String?, in app: LiveApp) -> PageRoute
    /// The deep link a page opened at `path` (with `next`) asks the app to show, or `nil` for none.
    /// By default `path` itself, except `/`.
    func deepLink(forPath path: String, next: String?) -> String?
    /// A page rendered while the app was starting (the splash) asks, through its event stream, for
    /// the page URL it was opened at, `path`: the page was rendered before the app could show it,
    /// and a new visitor's app is not kept between its first two requests, so the URL comes back
    /// with the stream. By default its deep link (`deepLink(forPath:next:)`) is opened
    /// (`LiveApp.open(deepLink:)`).
    func rememberTarget(_ path: String, in app: LiveApp)
    /// Adds the app's own routes to the server's router, after the framework's (`/healthz`, the
    /// page script and base stylesheet, the shell's JSON API, pages and event streams) and before
    /// the static files behind them. A handler that needs the session gets it from
    /// `shell.respond`, which hands it a `ShellRequestContext`. By default the app adds none.
    func installRoutes(into router: inout Router, shell: Shell)
}

extension ShellApplication {
    /// The app's screen types: every one the app coordinator's type shows, directly or through
    /// the coordinators it shows (`RestorationRegistry`).
    package var screenTypes: [ViewController.Type] {
        RestorationRegistry.screenTypes(shownBy: RootCoordinator.self)
    }

    /// Every action of `screenTypes`, each name once (the first screen's description), then
    /// `launch` (with its `source`), which every screen accepts, and — when the app's coordinators
    /// declare a route (`Route`) — `show` (with its `screen`), which every screen accepts too.
    package var actionCatalog: [ActionDescription] {
        var seen = Set<String>()
        let typed = screenTypes.compactMap { $0 as? any ActionOffering.Type }
        let routes = RestorationRegistry.of(RootCoordinator.self).routes
        let all =
            typed.flatMap { $0.offeredActions } + [launchDescription]
            + (routes.isEmpty ? [] : [ActionDescription.show])
        return all.filter { seen.insert($0.name).inserted }
    }

    /// `launch`: its `source`, one of the app coordinator's `LaunchSource` cases, and each case's
    /// parameters (not required: each source needs its own).
    package var launchDescription: ActionDescription {
        let sources = launchSources
        var parameters = [
            ActionParameter(name: "source", type: .string, choices: sources.isEmpty ? nil : sources.map(\.name))
        ]
        for source in sources {
            for parameter in source.parameters where !parameters.contains(where: { $0.name == parameter.name }) {
                parameters.append(
                    ActionParameter(
                        name: parameter.name, type: parameter.type, isRequired: false, choices: parameter.choices))
            }
        }
        return ActionDescription(name: ActionDescription.launch.name, parameters: parameters)
    }

    /// The app coordinator's launch sources, each with its parameters (`LaunchSources`).
    package var launchSources: [ActionDescription] { RootCoordinator.LaunchSource.descriptions }

    /// The parameters of the launch from `source` (`?launch=note&id=1` carries `id`), by name.
    package func launchParameters(of source: String) -> [String] {
        launchSources.first { $0.name == source }?.parameters.map(\.name) ?? []
    }

    /// Every action name any screen of the app offers, plus `launch` (and `show` with routes);
    /// others are 400: the names of `actionCatalog`.
    package var knownActions: Set<String> { Set(actionCatalog.map(\.name)) }

    /// No routes of the app's own by default.
    public func installRoutes(into router: inout Router, shell: Shell) {}

    /// No start-up work by default.
    public var startup: StartupWork? { nil }

    /// `path`, except `/` (which asks for nothing in particular).
    public func deepLink(forPath path: String, next: String?) -> String? { path == "/" ? nil : path }

    /// None.
    public var pagePaths: [String] { [] }

    /// Opens the deep link `path` asks for, if any: kept until the start-up work is done, else
    /// given to the app coordinator.
    public func rememberTarget(_ path: String, in app: LiveApp) {
        guard let link = deepLink(forPath: path, next: nil) else { return }
        app.open(deepLink: link)
    }

    /// A new session's app, its root lending `environment`: the first screen, owned by a new app
    /// coordinator, which is then started; the start-up work (if any) begins at `now`.
    package func makeApp(defaults: DefaultsStore, environment: EnvironmentValues, now: Int64) -> LiveApp {
        let first = makeFirstScreen()
        let root = RootController(initial: first, defaults: defaults, environment: environment)
        let coordinator = makeCoordinator(root: root)
        coordinator.own(first)
        let app = LiveApp(root: root, coordinator: coordinator)
        if let startup { app.startup = StartupState(began: now, work: startup) }
        coordinator.start()
        return app
    }

    /// The session's app rebuilt from `snapshot`, its root lending `environment`, or `nil` when
    /// the snapshot cannot be used (the session then starts afresh): the screens the snapshot
    /// names, made by name; a new app coordinator; under it the coordinators of the snapshot's
    /// tree, made by type, each given the screens it shows (`RestorationRegistry`); and the
    /// start-up work where it was.
    package func restoreApp(
        from snapshot: ShellSnapshot, defaults: DefaultsStore, environment: EnvironmentValues, now: Int64
    ) -> LiveApp? {
        let registry = RestorationRegistry.of(RootCoordinator.self)
        guard let screens = registry.screens.restore(snapshot) else { return nil }
        let root = RootController(
            restoring: screens.child, presented: screens.presented, log: LifecycleLog(records: snapshot.lifecycle),
            version: snapshot.version, lastTransition: snapshot.transition, defaults: defaults,
            environment: environment)
        ScreenPlace.restore(snapshot.extra["screens"], in: root)
        let coordinator = makeCoordinator(root: root)
        guard registry.restoreCoordinators(snapshot.coordinators, under: coordinator, root: root) else { return nil }
        root.notifications = ScheduledNotification.list(in: snapshot.extra)
        let app = LiveApp(root: root, coordinator: coordinator)
        app.startup = StartupState(restoring: snapshot.extra, work: startup)
        return app
    }
}

/// What a page URL leads to.
public enum PageRoute: Equatable, Sendable {
    /// Render the visible screen.
    case show
    /// Redirect (303) to this same-site path.
    case redirect(String)
    /// No page has this path.
    case notFound
}

/// The app coordinator at the top of a session's coordinator tree: it makes the routing
/// decisions — where the app goes once its start-up work is done, what a launch or a deep link
/// opens. The framework runs the work, keeps what waits for it and persists both.
public protocol ApplicationCoordinator: Coordinator {
    /// Where the app can be launched from (`launch` with its `source`), e.g. a notification.
    associatedtype LaunchSource: LaunchSources = NoLaunchSources
    /// The start-up work (`ShellApplication.startup`) is done: route, to `deepLink` if a page
    /// asked for one meanwhile (kept across restarts).
    func startupDidFinish(deepLink: String?)
    /// The app was launched from `source` (`launch`, which every screen accepts), with the
    /// request's other parameters in `request`.
    func launch(from source: LaunchSource, _ request: ActionRequest) throws(ActionError)
    /// A page asked for `deepLink` once the start-up work was done (its stream came late).
    func open(deepLink: String)
}

extension ApplicationCoordinator {
    /// Does nothing by default.
    public func startupDidFinish(deepLink: String?) {}
    /// Does nothing by default.
    public func open(deepLink: String) {}

    /// `launch`: its `source` is one of `LaunchSource`'s cases (else 400), its other parameters
    /// that case's associated values (400 naming one missing or mistyped), handled typed.
    public func launch(_ action: ActionRequest) throws(ActionError) {
        let sources = LaunchSource.descriptions.map(\.name)
        guard let name = action.string("source"), sources.contains(name) else {
            let names = sources.map { "\"\($0)\"" }.joined(separator: " or ")
            throw ActionError(status: 400, "launch needs \"source\": \(names.isEmpty ? "a launch source" : names)")
        }
        var parameters = action.parameters
        parameters["source"] = nil
        let source: LaunchSource
        do {
            source = try LaunchSource(
                decoding: ActionRequest(name: name, parameters: parameters, clientAddress: action.clientAddress))
        } catch {
            throw ActionError(status: 400, "launch from " + error.message)
        }
        try launch(from: source, action)
    }
}

extension ApplicationCoordinator where LaunchSource == NoLaunchSources {
    /// Never called: there is no source.
    public func launch(from source: NoLaunchSources, _ request: ActionRequest) throws(ActionError) {}
}
