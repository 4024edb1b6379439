import AppShellJSON

/// A notification a screen scheduled for its session's open pages (`ScreenContext
/// .scheduleNotification`): kept with the controllers, in the snapshot, until it is delivered, so
/// that a restart or an app rebuilt from its snapshot still sends it when it is due. It belongs to
/// the session's id as it was scheduled: a rotation (login, logout) drops it.
struct ScheduledNotification: Equatable, Sendable {
    /// When it is due (milliseconds since 1970).
    let due: Int64
    /// Its title.
    let title: String
    /// Its text.
    let body: String
    /// What a click on it launches: the `launch` action's parameters (`{"source": "note", "id":
    /// 1}`), or `nil` to only bring the page to the front.
    let launch: JSON?

    /// The `notification` event's data.
    var data: String {
        var members: [String: JSON] = ["title": .string(title), "body": .string(body)]
        if let launch { members["launch"] = launch }
        return JSON.object(members).serializedString
    }

    /// What the snapshot keeps of it.
    var json: JSON {
        var members: [String: JSON] = ["due": .integer(Int(due)), "title": .string(title), "body": .string(body)]
        if let launch { members["launch"] = launch }
        return .object(members)
    }

    init(due: Int64, title: String, body: String, launch: JSON? = nil) {
        self.due = due
        self.title = title
        self.body = body
        self.launch = launch
    }

    /// The launch `source` makes: its name as `source`, its associated values beside it.
    static func launch(_ source: some LaunchSources) -> JSON {
        let sent = source.actionRequest
        var members = sent.parameters
        members["source"] = .string(sent.name)
        return .object(members)
    }

    /// The notification `json` keeps, if it is one.
    init?(json: JSON) {
        guard let due = json["due"]?.integerValue, let title = json["title"]?.stringValue,
            let body = json["body"]?.stringValue
        else { return nil }
        self.init(due: Int64(due), title: title, body: body, launch: json["launch"])
    }

    /// The notifications a snapshot's `extra` keeps.
    static func list(in extra: JSON) -> [ScheduledNotification] {
        (extra["notifications"]?.arrayValue ?? []).compactMap(ScheduledNotification.init(json:))
    }
}
