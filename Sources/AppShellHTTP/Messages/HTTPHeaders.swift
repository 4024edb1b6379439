/// An ordered list of header fields whose names compare case-insensitively (RFC 9110 §5.1).
///
/// The fields a client sent are kept as the bytes libmicrohttpd gave, in one buffer, and become
/// strings only when asked for: most requests are answered after reading one or two of them.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field as it was written. A struct rather than a tuple: arrays of tuples are copied
    /// and destroyed through run-time type metadata, arrays of structs with code made for them.
    struct Field: Sendable, Equatable {
        let name: String
        let value: String
    }

    /// Received fields, each as its name's byte count and its value's (four bytes each, in the
    /// machine's order), then the name's bytes and the value's.
    private var received: [UInt8] = []
    /// Fields added in code, after the received ones.
    private var added: [Field] = []

    /// Every field as strings, received ones first.
    var storage: [Field] {
        guard !received.isEmpty else { return added }
        var fields: [Field] = []
        forEachReceived { name, value in
            fields.append(
                Field(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self)))
            return true
        }
        return fields + added
    }

    /// The fields in the order they were added, with names as they were written.
    public var fields: [(name: String, value: String)] { storage.map { ($0.name, $0.value) } }

    /// An empty list.
    public init() {}

    /// An empty list with room for `bytes` bytes of received fields.
    init(receivedCapacity bytes: Int) { received.reserveCapacity(bytes) }

    /// The room for received fields, in bytes.
    var receivedCapacity: Int { received.capacity }

    /// Removes every field, keeping the room of the received ones when no copy shares it.
    mutating func removeAll() {
        received.removeAll(keepingCapacity: true)
        added.removeAll(keepingCapacity: true)
    }

    /// A list from literal pairs, in order (with room for one more, such as a `Set-Cookie`).
    public init(dictionaryLiteral elements: (String, String)...) {
        added.reserveCapacity(elements.count + 1)
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// The first value of the field `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        var found: String?
        forEachValue(named: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// Every value of the field `name`, in order.
    public func values(for name: String) -> [String] {
        var values: [String] = []
        forEachValue(named: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// Appends a field, keeping any others of the same name (as `Set-Cookie` needs).
    public mutating func add(name: String, value: String) {
        added.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one field holding `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        if !received.isEmpty {
            added = storage
            received = []
        }
        added.removeAll { HTTPHeaders.equalNames($0.name, name) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Iterates over the fields in order, as name/value pairs.
    public func makeIterator() -> Iterator { Iterator(base: storage.makeIterator()) }

    /// The iterator over the fields.
    public struct Iterator: IteratorProtocol {
        fileprivate var base: IndexingIterator<[Field]>

        /// The next field, or `nil` after the last.
        public mutating func next() -> (name: String, value: String)? {
            base.next().map { ($0.name, $0.value) }
        }
    }

    /// Whether both hold the same fields, written the same way, in the same order.
    func hasSameFields(as other: HTTPHeaders) -> Bool {
        guard received.isEmpty && other.received.isEmpty else { return storage.elementsEqual(other.storage, by: ==) }
        guard added.count == other.added.count else { return false }
        // Unchanged copies share their fields' memory.
        let shared = added.withUnsafeBufferPointer { mine in
            other.added.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
        return shared || added.elementsEqual(other.added, by: ==)
    }

    /// Appends a field received from the client.
    mutating func receive(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        let counts = (UInt32(truncatingIfNeeded: name.count), UInt32(truncatingIfNeeded: value.count))
        // Three copies of contiguous bytes (an append of repeated zeros took the generic path).
        withUnsafeBytes(of: counts) { received.append(contentsOf: $0) }
        received.append(contentsOf: name)
        received.append(contentsOf: value)
    }

    /// Calls `body` with the bytes of each value of the field `name`, in order, until it returns
    /// false; nothing is copied for the received fields.
    func forEachValue(named name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        var name = name
        let finished = name.withUTF8 { wanted in
            var finished = false
            forEachReceived { fieldName, value in
                guard HTTPHeaders.equalNames(fieldName, wanted) else { return true }
                finished = !body(value)
                return !finished
            }
            return finished
        }
        if finished { return }
        for field in added where HTTPHeaders.equalNames(field.name, name) {
            var value = field.value
            if !value.withUTF8({ body($0) }) { return }
        }
    }

    /// Calls `body` with each received field's name and value, in order, until it returns false.
    private func forEachReceived(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Bool) {
        received.withUnsafeBufferPointer { bytes in
            let raw = UnsafeRawBufferPointer(bytes)
            var offset = 0
            while offset + 8 <= bytes.count {
                let nameCount = Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                let valueCount = Int(raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
                let nameStart = offset + 8
                let valueStart = nameStart + nameCount
                offset = valueStart + valueCount
                let name = UnsafeBufferPointer(rebasing: bytes[nameStart..<valueStart])
                if !body(name, UnsafeBufferPointer(rebasing: bytes[valueStart..<offset])) { return }
            }
        }
    }

    /// ASCII case-insensitive comparison of two field names, without allocating.
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        // Names are usually written as the code that looks them up writes them.
        if lhs == rhs { return true }
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in rhs.withUTF8 { equalNames(left, $0) } }
    }

    /// ASCII case-insensitive comparison of two field names given as bytes.
    static func equalNames(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for index in 0..<lhs.count where lhs[index] != rhs[index] {
            if lowercased(lhs[index]) != lowercased(rhs[index]) { return false }
        }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
