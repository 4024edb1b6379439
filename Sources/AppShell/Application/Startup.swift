import AppShellJSON
import AppShellSessions

/// The work a new session does before its app routes (the splash's): it lasts at least
/// `milliseconds`, then `work` runs with the session's defaults and the app coordinator routes
/// (`ApplicationCoordinator.startupDidFinish(deepLink:)`). The framework finishes it on time
/// without a request, keeps a deep link that arrives meanwhile, and persists both across restarts.
public struct StartupWork: Sendable {
    /// How long the start-up lasts at least.
    public let milliseconds: Int64
    /// The work itself, run when the time has passed, before the app coordinator routes.
    public let work: @Sendable (DefaultsStore) -> Void

    /// Start-up work that lasts at least `milliseconds`, then runs `work`.
    public init(milliseconds: Int64, work: @escaping @Sendable (DefaultsStore) -> Void = { _ in }) {
        self.milliseconds = milliseconds
        self.work = work
    }
}

/// Where a launch can come from (`launch`'s `source`), with what it carries: an enum whose cases
/// are the sources, their labelled associated values the launch's typed parameters, as a screen's
/// actions are (`ScreenActions`): `case note(id: Int)` is `{"action": "launch", "source": "note",
/// "id": 1}`, the link `/?launch=note&id=1`, or a notification scheduled with `launch: .note(id: 1)`.
/// The app coordinator handles each, typed.
public protocol LaunchSources: ScreenActions {}

/// No launch source: an app coordinator that declares none refuses every launch (400).
public enum NoLaunchSources: LaunchSources {
    /// Never made: there is no case.
    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "there is no launch source"))
    }

    /// Never called: there is no case.
    public func encode(to encoder: any Encoder) throws {}

    /// None.
    public static var allCases: [NoLaunchSources] { [] }
}

/// A live app's start-up work under way: when it began, and the deep link waiting for it.
struct StartupState {
    /// When it began (milliseconds since 1970).
    let began: Int64
    /// The app's work.
    let work: StartupWork
    /// The page a link opened during the start-up asked for, shown once it is done.
    var deepLink: String?

    init(began: Int64, work: StartupWork) {
        self.began = began
        self.work = work
    }

    /// The state a snapshot kept (`json`), or `nil` when the start-up was done. Snapshots of
    /// before the framework kept it have the demo's names for the same values.
    init?(restoring extra: JSON, work: StartupWork?) {
        guard let began = (extra["startupBegan"] ?? extra["splashStartedAt"])?.integerValue else { return nil }
        self.began = Int64(began)
        self.work = work ?? StartupWork(milliseconds: 0)
        deepLink = (extra["deepLink"] ?? extra["splashTarget"])?.stringValue
    }

    /// When it is due to finish.
    var deadline: Int64 { began + work.milliseconds }

    /// What the snapshot keeps of it.
    var json: JSON {
        var members: [String: JSON] = ["startupBegan": .integer(Int(began))]
        if let deepLink { members["deepLink"] = .string(deepLink) }
        return .object(members)
    }
}
