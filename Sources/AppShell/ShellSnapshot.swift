import AppShellJSON
import AppShellSessions

/// A session's controller tree as stored with the session: enough to put the user back where they
/// were after a restart (the root child, the stack, the modal screen, the coordinators), with the
/// lifecycle log and the version so both continue.
public struct ShellSnapshot: Sendable, Equatable {
    /// The root controller's child.
    public var root: String
    /// The navigation stack, bottom first (empty when the child is not a navigation controller).
    public var stack: [String]
    /// The modal screen, if any.
    public var presented: String?
    /// The coordinator tree, `{"name", "children"}`.
    public var coordinators: JSON
    /// The lifecycle log.
    public var lifecycle: [LifecycleRecord] { didSet { log = nil } }
    /// The log the snapshot was made from, which keeps its records' JSON and bytes, until
    /// `lifecycle` changes.
    private var log: LifecycleLog?
    /// The version.
    public var version: Int
    /// What the app keeps beside these.
    public var extra: JSON
    /// The channel the session's pages listen on (`LiveApp.channel`); `nil` in snapshots
    /// stored before it was kept.
    public var channel: String?
    /// The last transition (`RootController.lastTransition`), which the state shows: restored
    /// with the version, so that one version names one state after a rebuild too.
    public var transition: LastTransition?

    /// A snapshot with the given parts.
    public init(
        root: String, stack: [String], presented: String?, coordinators: JSON, lifecycle: [LifecycleRecord],
        version: Int, extra: JSON, channel: String? = nil, transition: LastTransition? = nil
    ) {
        self.root = root
        self.stack = stack
        self.presented = presented
        self.coordinators = coordinators
        self.lifecycle = lifecycle
        self.version = version
        self.extra = extra
        self.channel = channel
        self.transition = transition
    }

    /// A snapshot with the given parts, its lifecycle from `log` (whose JSON it reuses).
    public init(
        root: String, stack: [String], presented: String?, coordinators: JSON, log: LifecycleLog,
        version: Int, extra: JSON, channel: String? = nil, transition: LastTransition? = nil
    ) {
        self.init(
            root: root, stack: stack, presented: presented, coordinators: coordinators, lifecycle: log.records,
            version: version, extra: extra, channel: channel, transition: transition)
        self.log = log
    }

    /// Snapshots are equal when their parts are (however their lifecycle's JSON was made).
    public static func == (left: ShellSnapshot, right: ShellSnapshot) -> Bool {
        left.root == right.root && left.stack == right.stack && left.presented == right.presented
            && left.coordinators == right.coordinators && left.lifecycle == right.lifecycle
            && left.version == right.version && left.extra == right.extra && left.channel == right.channel
            && left.transition == right.transition
    }

    /// The stored form.
    public var json: JSON { stored(lifecycle: .array(log?.json ?? lifecycle.map(\.json))) }

    /// The stored form with `lifecycle` as the lifecycle member.
    private func stored(lifecycle: JSON) -> JSON {
        var members: [String: JSON] = [
            "root": .string(root), "stack": .array(stack.map { .string($0) }),
            "presented": presented.map { .string($0) } ?? .null, "coordinators": coordinators,
            "lifecycle": lifecycle, "version": .integer(version), "extra": extra,
        ]
        if let channel { members["channel"] = .string(channel) }
        if let transition {
            members["transition"] = ["kind": .string(transition.kind.rawValue), "animated": .bool(transition.animated)]
        }
        return .object(members)
    }

    /// `json`'s compact encoding, with the lifecycle records' bytes copied from the log when the
    /// snapshot was made from one (the same bytes, without writing them again).
    public var serialized: [UInt8] {
        guard let log else { return json.serialized }
        return json.serialized(writingMember: "lifecycle") { log.write(into: &$0) }
    }

    /// The snapshot as a session keeps it: `serialized`'s bytes, made only when they are asked
    /// for (a backend writing a file, the app rebuilt from them).
    ///
    /// It holds what those bytes need and no more: of a log, only its records' bytes, which the
    /// live log shares. Holding the log itself would make the live log copy its three arrays at
    /// its next record (and this snapshot free them when it is replaced): 10 000 and 8 000
    /// instructions per action (callgrind, README Performance).
    public var kept: SessionSnapshot {
        guard let log else {
            let snapshot = self
            return SessionSnapshot { snapshot.serialized }
        }
        // Its parts as they are, without the log.
        var parts = self
        parts.lifecycle = []
        let kept = parts
        let records = log.joinedBytes
        return SessionSnapshot { kept.write(records: records) }
    }

    /// `serialized`'s bytes for a snapshot whose log's records' encodings, joined by commas, are
    /// `records`, written member by member in the order the serializer sorts them, without the
    /// dictionary `json` builds and sorts: 24 000 instructions per snapshot through `json` (callgrind), 11 000 this way.
    /// `ShellSnapshotTests` checks that the bytes are `serialized`'s.
    func write(records: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512 + records.count)
        func member(_ name: StaticString, first: Bool = false) {
            if !first { output.append(UInt8(ascii: ",")) }
            output.append(UInt8(ascii: "\""))
            output.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            output.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        output.append(UInt8(ascii: "{"))
        if let channel {
            member("channel", first: true)
            JSON.writeString(channel, into: &output)
        }
        member("coordinators", first: channel == nil)
        coordinators.write(into: &output)
        member("extra")
        extra.write(into: &output)
        member("lifecycle")
        output.append(UInt8(ascii: "["))
        output.append(contentsOf: records)
        output.append(UInt8(ascii: "]"))
        member("presented")
        if let presented { JSON.writeString(presented, into: &output) } else { JSON.null.write(into: &output) }
        member("root")
        JSON.writeString(root, into: &output)
        member("stack")
        output.append(UInt8(ascii: "["))
        for index in stack.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSON.writeString(stack[index], into: &output)
        }
        output.append(UInt8(ascii: "]"))
        if let transition {
            member("transition")
            output.append(contentsOf: Array("{\"animated\":\(transition.animated),\"kind\":".utf8))
            JSON.writeString(transition.kind.rawValue, into: &output)
            output.append(UInt8(ascii: "}"))
        }
        member("version")
        JSON.integer(version).write(into: &output)
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// The snapshot stored as `json`; `nil` when it is not one.
    public init?(json: JSON) {
        guard let root = json["root"]?.stringValue, let stack = json["stack"]?.arrayValue,
            let version = json["version"]?.integerValue, let lifecycle = json["lifecycle"]?.arrayValue,
            let coordinators = json["coordinators"]
        else { return nil }
        self.root = root
        self.stack = stack.compactMap(\.stringValue)
        self.presented = json["presented"]?.stringValue
        self.coordinators = coordinators
        self.lifecycle = lifecycle.compactMap(LifecycleRecord.init(json:))
        self.version = version
        self.extra = json["extra"] ?? .null
        self.channel = json["channel"]?.stringValue
        self.transition = json["transition"]?["kind"]?.stringValue.flatMap(TransitionKind.init(rawValue:)).map {
            LastTransition(kind: $0, animated: json["transition"]?["animated"]?.boolValue ?? false)
        }
    }
}

/// A transition that ran: its kind and whether the browser animates it.
public struct LastTransition: Sendable, Equatable {
    /// What changed.
    public var kind: TransitionKind
    /// Whether the browser plays it.
    public var animated: Bool

    /// A transition of `kind`.
    public init(kind: TransitionKind, animated: Bool) {
        self.kind = kind
        self.animated = animated
    }
}
