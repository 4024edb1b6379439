import AppShellConcurrency
import AppShellJSON

/// A callback of UIKit's view-controller lifecycle and containment, as the lifecycle log names it.
package enum LifecycleEvent: String, Sendable, CaseIterable {
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
package enum TransitionKind: String, Sendable {
    /// The root controller swapped its child (a login or logout's cross-dissolve).
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
package enum LifecycleRecord: Sendable, Hashable {
    /// `screen` received `event`.
    case screen(String, LifecycleEvent)
    /// A transition of `kind` ran its completion.
    case completion(TransitionKind)

    /// `{"screen": …, "event": …}` or `{"event": "completion", "transition": …}`.
    ///
    /// Every state and snapshot carries a session's last 50 records, and a session has only a few
    /// different ones (its screens times their events): each different record's JSON is made once
    /// and shared, so writing the log builds no dictionaries.
    package var json: JSON { encoded.json }

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
    package var storedCode: String {
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
    package init?(storedCode code: String) {
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
    package init?(json: JSON) {
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
///
/// It keeps its records as bytes only — their JSON and their stored codes, each joined by commas,
/// the two forms the state and the snapshot copy in one piece — and reads the records back from
/// those bytes when asked for them (tests, a rebuilt state tree). Every session's app holds one:
/// keeping the records, their JSON values and their lengths beside the bytes was 1 000 of the
/// 5 400 bytes a visitor's session at the login screen held (massif, bench/RESULTS.md).
package struct LifecycleLog: Sendable {
    /// How many records are kept.
    package static let capacity = 50
    /// The kept records, oldest first: read back from their stored codes (made at each call).
    package var records: [LifecycleRecord] { LifecycleLog.records(storedCodes: storedCodes) }
    /// The kept records' JSON, in the same order (made at each call: the state and the snapshot
    /// copy the log's bytes instead).
    package var json: [JSON] { records.map(\.json) }
    /// How many records are kept.
    private(set) var count = 0
    /// The kept records' compact encodings joined by commas — the array's bytes between its
    /// brackets — so that the state and the snapshot copy the whole log in one piece (copying its
    /// 50 records one by one was 17 000 of an action's instructions, callgrind, the Performance article).
    private var joined: [UInt8] = []
    /// The kept records' stored codes (`LifecycleRecord.storedCode`, as JSON strings) joined by
    /// commas: what a stored snapshot writes as its `log`, copied in one piece. A snapshot made
    /// from the log shares this array, not `records`: the log's next record then copies these
    /// 300-odd bytes instead of its 50 records, and the snapshot's bytes are made without
    /// looking at a record (writing each record's code took half of the store writer's work
    /// per action, perf, the Performance article).
    private(set) var storedCodes: [UInt8] = []

    /// An empty log.
    package init() {}

    /// Appends a record, dropping the oldest beyond the capacity.
    package mutating func append(_ record: LifecycleRecord) {
        appendBytes(of: record.encoded)
        count += 1
        if count > LifecycleLog.capacity {
            // The dropped records and the comma after each, found in the bytes themselves.
            let excess = count - LifecycleLog.capacity
            joined.removeFirst(LifecycleLog.lengthOfFirst(excess, in: joined))
            storedCodes.removeFirst(LifecycleLog.lengthOfFirst(excess, in: storedCodes))
            count = LifecycleLog.capacity
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
    }

    /// The length of the first `values` of `bytes` — compact JSON values joined by commas, as
    /// `joined` and `storedCodes` hold them — with the comma after each (all of `bytes` when it
    /// holds no more). A comma counts only outside strings and nested values.
    private static func lengthOfFirst(_ values: Int, in bytes: [UInt8]) -> Int {
        var found = 0
        var depth = 0
        var inString = false
        var escaped = false
        for index in bytes.indices {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ",") where depth == 0:
                found += 1
                if found == values { return index + 1 }
            default: break
            }
        }
        return bytes.count
    }

    /// The records whose stored codes `storedCodes` holds, joined by commas (as a log keeps them).
    static func records(storedCodes: [UInt8]) -> [LifecycleRecord] {
        guard !storedCodes.isEmpty,
            let codes = try? JSON(parsing: [UInt8(ascii: "[")] + storedCodes + [UInt8(ascii: "]")]).arrayValue
        else { return [] }
        return codes.compactMap { $0.stringValue.flatMap(LifecycleRecord.init(storedCode:)) }
    }

    /// A log holding `records` (the last `capacity` of them).
    package init(records: [LifecycleRecord]) {
        let kept = records.suffix(LifecycleLog.capacity)
        count = kept.count
        for record in kept { appendBytes(of: record.encoded) }
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
