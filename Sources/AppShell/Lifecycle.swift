import AppShellConcurrency
import AppShellJSON

/// A callback of UIKit's view-controller lifecycle and containment, as the lifecycle log names it.
public enum LifecycleEvent: String, Sendable, CaseIterable {
    /// The screen was loaded (once, before it first appears).
    case viewDidLoad
    /// The screen is about to appear.
    case viewWillAppear
    /// The screen appeared.
    case viewDidAppear
    /// The screen is about to disappear.
    case viewWillDisappear
    /// The screen disappeared.
    case viewDidDisappear
    /// `willMove(toParent:)`: the screen is about to be added to or removed from a container.
    case willMove
    /// `didMove(toParent:)`: the screen was added to a container.
    case didMove
    /// `removeFromParent()`: the screen left its container.
    case removeFromParent
}

/// The kinds of transition, as completions name them.
public enum TransitionKind: String, Sendable {
    /// The root controller swapped its child (seed 001's fade).
    case root
    /// A screen was pushed onto the navigation stack.
    case push
    /// The top screen was popped off the navigation stack.
    case pop
    /// A screen was presented modally.
    case present
    /// The modal screen was dismissed.
    case dismiss
}

/// One entry of a session's lifecycle log.
public enum LifecycleRecord: Sendable, Hashable {
    /// `screen` received `event`.
    case screen(String, LifecycleEvent)
    /// A transition of `kind` ran its completion.
    case completion(TransitionKind)

    /// `{"screen": …, "event": …}` or `{"event": "completion", "transition": …}`.
    ///
    /// Every state and snapshot carries a session's last 50 records, and a session has only a few
    /// different ones (its screens times their events): each different record's JSON is made once
    /// and shared, so writing the log builds no dictionaries.
    public var json: JSON { encoded.json }

    /// The record's JSON, its compact encoding and its stored code (`writeStoredCode`), all three
    /// shared by every log that holds the record.
    var encoded: Encoded {
        if let shared = LifecycleRecord.shared.withLock({ $0[self] }) { return shared }
        let json = makeJSON()
        var code: [UInt8] = []
        writeStoredCode(into: &code)
        let encoded = Encoded(json: json, bytes: json.serialized, code: code)
        LifecycleRecord.shared.withLock { shared in
            // Bounded: apps with very many screen names start over rather than grow without end.
            if shared.count >= LifecycleRecord.sharedLimit { shared.removeAll(keepingCapacity: true) }
            shared[self] = encoded
        }
        return encoded
    }

    /// A record's JSON and the two byte forms it is written in.
    struct Encoded: Sendable {
        /// `json`.
        let json: JSON
        /// `json`'s compact encoding (what states and events write).
        let bytes: [UInt8]
        /// `storedCode` as a JSON string (what stored snapshots write).
        let code: [UInt8]
    }

    /// The encodings of the records met so far, at most `sharedLimit` of them.
    private static let shared = Locked<[LifecycleRecord: Encoded]>([:])
    private static let sharedLimit = 4096

    private func makeJSON() -> JSON {
        switch self {
        case .screen(let name, let event): return ["screen": .string(name), "event": .string(event.rawValue)]
        case .completion(let kind): return ["event": "completion", "transition": .string(kind.rawValue)]
        }
    }

    /// The record as a stored snapshot keeps it (format 2): the screen's name or the transition's
    /// kind, then one letter for the event — `"listw"` for `viewWillAppear` of `list`, `"pushc"`
    /// for a push's completion: about 6 bytes instead of the JSON's 45.
    public var storedCode: String {
        var bytes: [UInt8] = []
        writeStoredCode(into: &bytes)
        // Written as a JSON string: its content is the code (the name's escapes read back).
        return (try? JSON(parsing: bytes))?.stringValue ?? ""
    }

    /// Appends `storedCode` as a JSON string: the name written as a JSON string, its closing
    /// quote turned into the letter and written again after it.
    func writeStoredCode(into output: inout [UInt8]) {
        switch self {
        case .screen(let name, let event):
            JSON.writeString(name, into: &output)
            output[output.count - 1] = LifecycleRecord.letter(of: event)
        case .completion(let kind):
            JSON.writeString(kind.rawValue, into: &output)
            output[output.count - 1] = UInt8(ascii: "c")
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The record `storedCode` gives `code`; `nil` when it is none.
    public init?(storedCode code: String) {
        guard let letter = code.utf8.last else { return nil }
        let rest = String(code.dropLast())
        if letter == UInt8(ascii: "c") {
            guard let kind = TransitionKind(rawValue: rest) else { return nil }
            self = .completion(kind)
        } else {
            guard let event = LifecycleEvent.allCases.first(where: { LifecycleRecord.letter(of: $0) == letter }) else {
                return nil
            }
            self = .screen(rest, event)
        }
    }

    /// The events' letters in stored codes (`c` is a completion's). Stored in files: never change
    /// one, only add new ones.
    static func letter(of event: LifecycleEvent) -> UInt8 {
        switch event {
        case .viewDidLoad: return UInt8(ascii: "l")
        case .viewWillAppear: return UInt8(ascii: "w")
        case .viewDidAppear: return UInt8(ascii: "a")
        case .viewWillDisappear: return UInt8(ascii: "x")
        case .viewDidDisappear: return UInt8(ascii: "d")
        case .willMove: return UInt8(ascii: "m")
        case .didMove: return UInt8(ascii: "n")
        case .removeFromParent: return UInt8(ascii: "r")
        }
    }

    /// The record a log entry's JSON stands for.
    public init?(json: JSON) {
        guard let event = json["event"]?.stringValue else { return nil }
        if event == "completion" {
            guard let kind = json["transition"]?.stringValue.flatMap(TransitionKind.init(rawValue:)) else { return nil }
            self = .completion(kind)
        } else {
            guard let name = json["screen"]?.stringValue, let event = LifecycleEvent(rawValue: event) else {
                return nil
            }
            self = .screen(name, event)
        }
    }
}

/// The last `capacity` lifecycle records of a session, oldest first.
public struct LifecycleLog: Sendable {
    /// How many records are kept.
    public static let capacity = 50
    /// The kept records, oldest first.
    public private(set) var records: [LifecycleRecord] = []
    /// The kept records' JSON, in the same order: looked up once per record when it is appended,
    /// not once per record for every state and snapshot written (an action writes both, with 50
    /// records each, and each lookup hashes the record's strings).
    public private(set) var json: [JSON] = []
    /// The kept records' compact encodings joined by commas — the array's bytes between its
    /// brackets — so that the state and the snapshot copy the whole log in one piece (copying its
    /// 50 records one by one was 17 000 of an action's instructions, callgrind, README Performance).
    private var joined: [UInt8] = []
    /// The kept records' stored codes (`LifecycleRecord.storedCode`, as JSON strings) joined by
    /// commas: what a stored snapshot writes as its `log`, copied in one piece. A snapshot made
    /// from the log shares this array, not `records`: the log's next record then copies these
    /// 300-odd bytes instead of its 50 records, and the snapshot's bytes are made without
    /// looking at a record (writing each record's code took half of the store writer's work
    /// per action, perf, README Performance).
    private(set) var storedCodes: [UInt8] = []
    /// The length of each kept record's encoding in `joined` and of its code in `storedCodes`,
    /// oldest first (32 bits each: 8 bytes a record, every session's app keeps 50).
    private var lengths: [(json: UInt32, code: UInt32)] = []

    /// An empty log.
    public init() {}

    /// Appends a record, dropping the oldest beyond the capacity.
    public mutating func append(_ record: LifecycleRecord) {
        let encoded = record.encoded
        records.append(record)
        json.append(encoded.json)
        appendBytes(of: encoded)
        if records.count > LifecycleLog.capacity {
            let excess = records.count - LifecycleLog.capacity
            records.removeFirst(excess)
            json.removeFirst(excess)
            // The dropped records and the comma after each.
            var dropped = (json: excess, code: excess)
            for length in lengths[..<excess] {
                dropped.json += Int(length.json)
                dropped.code += Int(length.code)
            }
            joined.removeFirst(dropped.json)
            storedCodes.removeFirst(dropped.code)
            lengths.removeFirst(excess)
        }
    }

    /// Adds a record's encoding and code after the others'.
    private mutating func appendBytes(of encoded: LifecycleRecord.Encoded) {
        if !joined.isEmpty {
            joined.append(UInt8(ascii: ","))
            storedCodes.append(UInt8(ascii: ","))
        }
        joined.append(contentsOf: encoded.bytes)
        storedCodes.append(contentsOf: encoded.code)
        lengths.append((UInt32(encoded.bytes.count), UInt32(encoded.code.count)))
    }

    /// A log holding `records` (the last `capacity` of them).
    public init(records: [LifecycleRecord]) {
        self.records = Array(records.suffix(LifecycleLog.capacity))
        let encoded = self.records.map(\.encoded)
        self.json = encoded.map(\.json)
        for record in encoded { appendBytes(of: record) }
    }

    /// The length of the log's compact encoding (what `write(into:)` appends).
    var byteCount: Int { joined.count + 2 }

    /// Appends the log as a JSON array (the bytes `JSON.array(json).serialized` gives).
    func write(into output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        output.append(contentsOf: joined)
        output.append(UInt8(ascii: "]"))
    }
}
