import AppShellConcurrency

/// What an app keeps beside a session's values (its controller tree), as the app made it: the
/// bytes that are stored, made from the app's own value only when something needs them — a
/// backend that writes them to a file (on the store writer's thread), or the app rebuilt from
/// them — and then once.
///
/// DESIGN: an action changes the snapshot every time, and the memory store never needs its
/// bytes unless the app is rebuilt (a failed request, a session that left memory and came
/// back); serializing it on every action cost a fifth of one (the Performance article). The value a
/// snapshot is made from must not change afterwards (a value type, captured by `make`).
package final class SessionSnapshot: Sendable {
    /// The bytes given at `init(bytes:)`, if it was made from bytes.
    private let given: [UInt8]?
    /// Makes the bytes, if it was made from a value.
    private let make: (@Sendable () -> [UInt8])?
    /// The bytes `make` made, once they were asked for.
    private let made = LazyObject<Bytes>()

    private final class Bytes: Sendable {
        let value: [UInt8]
        init(_ value: [UInt8]) { self.value = value }
    }

    /// A snapshot of these bytes (one loaded from a store, or made by an app that has them).
    package init(bytes: [UInt8]) {
        given = bytes
        make = nil
    }

    /// A snapshot whose bytes `make` gives when they are first asked for, on whichever thread
    /// asks (so `make` must only read values that no longer change).
    package init(serializing make: @escaping @Sendable () -> [UInt8]) {
        given = nil
        self.make = make
    }

    /// The stored form: made on the first call when the snapshot was made from a value.
    package var bytes: [UInt8] {
        if let given { return given }
        if let done = made.load() { return done.value }
        // Two threads asking at once both make them; one result is kept (they are the same).
        return made.storeIfNil(Bytes(make?() ?? [])).value
    }

    /// Whether the bytes exist already (given, or made since).
    package var isSerialized: Bool { given != nil || made.load() != nil }

    /// Whether `left` and `right` are known to be the same snapshot without making any bytes:
    /// both absent, the same object, or both made from equal bytes. A snapshot made from a value
    /// is new: it counts as a change even when its bytes would be equal.
    package static func same(_ left: SessionSnapshot?, _ right: SessionSnapshot?) -> Bool {
        switch (left, right) {
        case (nil, nil): return true
        case (let left?, let right?):
            if left === right { return true }
            guard let leftBytes = left.given, let rightBytes = right.given else { return false }
            return leftBytes == rightBytes
        default: return false
        }
    }
}
