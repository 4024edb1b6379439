import AppShellJSON
import AppShellSessions

/// A session's controller tree as stored with the session: enough to put the user back where they
/// were after a restart (the root child, the stack, the modal screen, the coordinators), with the
/// lifecycle log and the version so both continue.
package struct ShellSnapshot: Sendable, Equatable {
    /// The root controller's child.
    package var root: String
    /// The navigation stack, bottom first (empty when the child is not a navigation controller).
    package var stack: [String]
    /// The modal screen, if any.
    package var presented: String?
    /// The coordinator tree, `{"name", "children"}` (read back from its compact encoding in a
    /// snapshot of a live app, which keeps that only).
    package var coordinators: JSON {
        get { coordinatorsValue ?? writtenCoordinators.flatMap { try? JSON(parsing: $0) } ?? .null }
        set {
            coordinatorsValue = newValue
            writtenCoordinators = nil
        }
    }
    /// The lifecycle log (read back from its stored codes in a snapshot made from a log, which
    /// keeps those only).
    package var lifecycle: [LifecycleRecord] {
        get { records ?? LifecycleLog.records(storedCodes: storedLog ?? []) }
        set {
            records = newValue
            storedLog = nil
        }
    }
    /// The version.
    package var version: Int
    /// What the app keeps beside these.
    package var extra: JSON
    /// The channel the session's pages listen on (`LiveApp.channel`); `nil` in snapshots
    /// stored before it was kept.
    package var channel: String?
    /// The last transition (`RootController.lastTransition`), which the state shows: restored
    /// with the version, so that one version names one state after a rebuild too.
    package var transition: LastTransition?
    /// `lifecycle`'s records, when the snapshot was made from records (else `storedLog`).
    private var records: [LifecycleRecord]?
    /// `lifecycle`'s stored codes joined by commas, shared with the log the snapshot was made
    /// from (`LifecycleLog.storedCodes`); `nil` when it was made from records.
    private var storedLog: [UInt8]?
    /// `coordinators` as a value, when the snapshot was made with one (else `writtenCoordinators`).
    private var coordinatorsValue: JSON?
    /// `coordinators`' compact encoding, when the snapshot was made with it (`LiveApp.snapshot`):
    /// a live app's snapshot holds these bytes only, not the tree's dictionaries.
    private var writtenCoordinators: [UInt8]?
    /// `extra`'s compact encoding, in a kept snapshot (`kept`) whose extra holds something.
    private var writtenExtra: [UInt8]?

    /// A snapshot with the given parts.
    package init(
        root: String, stack: [String], presented: String?, coordinators: JSON, lifecycle: [LifecycleRecord],
        version: Int, extra: JSON, channel: String? = nil, transition: LastTransition? = nil
    ) {
        self.root = root
        self.stack = stack
        self.presented = presented
        self.coordinatorsValue = coordinators
        self.records = lifecycle
        self.version = version
        self.extra = extra
        self.channel = channel
        self.transition = transition
    }

    /// A snapshot with the given parts, its lifecycle from `log` (sharing its stored codes).
    package init(
        root: String, stack: [String], presented: String?, coordinators: JSON, log: LifecycleLog,
        version: Int, extra: JSON, channel: String? = nil, transition: LastTransition? = nil
    ) {
        self.init(
            root: root, stack: stack, presented: presented, coordinators: coordinators, lifecycle: [],
            version: version, extra: extra, channel: channel, transition: transition)
        records = nil
        storedLog = log.storedCodes
    }

    /// A snapshot of a live app: its coordinator tree written already (and kept as those bytes).
    init(
        root: String, stack: [String], presented: String?, coordinators: CoordinatorTree, log: LifecycleLog,
        version: Int, extra: JSON, channel: String?, transition: LastTransition?
    ) {
        self.init(
            root: root, stack: stack, presented: presented, coordinators: .null, log: log,
            version: version, extra: extra, channel: channel, transition: transition)
        coordinatorsValue = nil
        writtenCoordinators = coordinators.bytes
    }

    /// Snapshots are equal when their parts are (however their lifecycle's JSON was made).
    package static func == (left: ShellSnapshot, right: ShellSnapshot) -> Bool {
        left.root == right.root && left.stack == right.stack && left.presented == right.presented
            && left.coordinators == right.coordinators && left.lifecycle == right.lifecycle
            && left.version == right.version && left.extra == right.extra && left.channel == right.channel
            && left.transition == right.transition
    }

    /// The stored form's version: 2 keeps the lifecycle log as `log`, an array of the records'
    /// stored codes (`LifecycleRecord.storedCode`, about 6 bytes a record); 1 (no `format`
    /// member, snapshots stored before 2026-12-01) kept it as `lifecycle`, an array of the
    /// records' JSON (about 45 bytes a record: a stored snapshot of 2.4 KB, one per page of the
    /// SQLite file, instead of about 600 bytes). Both load.
    package static let storedFormat = 2

    /// The stored form (format `storedFormat`).
    package var json: JSON {
        var members: [String: JSON] = [
            "root": .string(root), "stack": .array(stack.map { .string($0) }),
            "presented": presented.map { .string($0) } ?? .null, "coordinators": coordinators,
            "format": .integer(ShellSnapshot.storedFormat),
            "log": .array(lifecycle.map { .string($0.storedCode) }), "version": .integer(version), "extra": extra,
        ]
        if let channel { members["channel"] = .string(channel) }
        if let transition {
            members["transition"] = ["kind": .string(transition.kind.rawValue), "animated": .bool(transition.animated)]
        }
        return .object(members)
    }

    /// `json`'s compact encoding, written member by member (`write(records:)`).
    package var serialized: [UInt8] { write(records: lifecycle) }

    /// The snapshot as a session keeps it: `serialized`'s bytes, made only when they are asked
    /// for (a backend writing a file, the app rebuilt from them), on the thread that asks (the
    /// store writer's).
    ///
    /// It holds what those bytes need and no more: of a snapshot made from a log, the log's
    /// stored codes (`LifecycleLog.storedCodes`, one array the live log shares until its next
    /// record) and not its records. Holding the records' array made the live log copy its 50
    /// records at its next record, and the store writer free them; holding the log itself would
    /// make the live log copy its arrays at its next record (and this snapshot free them when it
    /// is replaced): 10 000 and 8 000 instructions per action (callgrind, the Performance article).
    /// Of `extra`, it holds the compact encoding: its dictionaries (three for a login screen's
    /// `next`, 450 bytes) stayed with the session in memory until its next snapshot.
    package var kept: SessionSnapshot {
        var parts = self
        let records = storedLog == nil ? lifecycle : []
        parts.records = nil
        if case .object(let members) = extra, !members.isEmpty {
            var bytes: [UInt8] = []
            extra.write(into: &bytes)
            parts.writtenExtra = bytes
            parts.extra = .null
        }
        let kept = parts
        return SessionSnapshot { kept.write(records: records) }
    }

    /// `serialized`'s bytes for a snapshot whose lifecycle is `storedLog` or else `records`
    /// (written as their stored codes), written member by member in the order the serializer
    /// sorts them, without the dictionary `json` builds and sorts (24 000 instructions per
    /// snapshot through `json`, callgrind, 11 000 this way). `ShellSnapshotTests` checks that
    /// the bytes are `json`'s.
    func write(records: [LifecycleRecord]) -> [UInt8] {
        var output: [UInt8] = []
        // Room for all of it at once (growing the array copied it: a third of this function's
        // cost). The names and punctuation take 96 bytes.
        var room = 160 + (storedLog?.count ?? 8 * records.count) + (writtenCoordinators?.count ?? 256)
        room += writtenExtra?.count ?? 0
        room += root.utf8.count + (presented?.utf8.count ?? 4) + (channel?.utf8.count ?? 0)
        for screen in stack { room += screen.utf8.count + 3 }
        output.reserveCapacity(room)
        // Each member's name with its punctuation is one literal: one append, not four.
        if let channel {
            JSON.append("{\"channel\":", to: &output)
            JSON.writeString(channel, into: &output)
            JSON.append(",\"coordinators\":", to: &output)
        } else {
            JSON.append("{\"coordinators\":", to: &output)
        }
        if let writtenCoordinators {
            output.append(contentsOf: writtenCoordinators)
        } else {
            coordinators.write(into: &output)
        }
        JSON.append(",\"extra\":", to: &output)
        if let writtenExtra { output.append(contentsOf: writtenExtra) } else { extra.write(into: &output) }
        JSON.append(",\"format\":", to: &output)
        JSON.integer(ShellSnapshot.storedFormat).write(into: &output)
        JSON.append(",\"log\":[", to: &output)
        if let storedLog {
            output.append(contentsOf: storedLog)
        } else {
            for index in records.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: records[index].encoded.code)
            }
        }
        JSON.append("],\"presented\":", to: &output)
        if let presented { JSON.writeString(presented, into: &output) } else { JSON.append("null", to: &output) }
        JSON.append(",\"root\":", to: &output)
        JSON.writeString(root, into: &output)
        JSON.append(",\"stack\":[", to: &output)
        for index in stack.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSON.writeString(stack[index], into: &output)
        }
        if let transition {
            JSON.append(
                transition.animated
                    ? "],\"transition\":{\"animated\":true,\"kind\":"
                    : "],\"transition\":{\"animated\":false,\"kind\":", to: &output)
            JSON.writeString(transition.kind.rawValue, into: &output)
            JSON.append("},\"version\":", to: &output)
        } else {
            JSON.append("],\"version\":", to: &output)
        }
        JSON.integer(version).write(into: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// The snapshot stored as `json` in either format (`storedFormat`); `nil` when it is not one,
    /// or one of a newer format.
    package init?(json: JSON) {
        guard let root = json["root"]?.stringValue, let stack = json["stack"]?.arrayValue,
            let version = json["version"]?.integerValue, let coordinators = json["coordinators"]
        else { return nil }
        let format = json["format"]?.integerValue ?? 1
        let lifecycle: [LifecycleRecord]
        switch format {
        case 1:
            guard let records = json["lifecycle"]?.arrayValue else { return nil }
            lifecycle = records.compactMap(LifecycleRecord.init(json:))
        case 2:
            guard let codes = json["log"]?.arrayValue else { return nil }
            lifecycle = codes.compactMap { $0.stringValue.flatMap(LifecycleRecord.init(storedCode:)) }
        default:
            return nil
        }
        self.root = root
        self.stack = stack.compactMap(\.stringValue)
        self.presented = json["presented"]?.stringValue
        self.coordinatorsValue = coordinators
        self.records = lifecycle
        self.version = version
        self.extra = json["extra"] ?? .null
        self.channel = json["channel"]?.stringValue
        self.transition = json["transition"]?["kind"]?.stringValue.flatMap(TransitionKind.init(rawValue:)).map {
            LastTransition(kind: $0, animated: json["transition"]?["animated"]?.boolValue ?? false)
        }
    }
}

/// A transition that ran: its kind and whether the browser animates it.
package struct LastTransition: Sendable, Equatable {
    /// What changed.
    package var kind: TransitionKind
    /// Whether the browser plays it.
    package var animated: Bool

    /// A transition of `kind`.
    package init(kind: TransitionKind, animated: Bool) {
        self.kind = kind
        self.animated = animated
    }
}
