/// An ordered list of header fields whose names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field as it was written. A struct rather than a tuple: arrays of tuples are copied
    /// and destroyed through run-time type metadata, arrays of structs with code made for them.
    struct Field: Sendable {
        let name: String
        let value: String
    }

    /// The fields in the order they were added.
    private(set) var storage: [Field] = []

    /// The fields in the order they were added, with names as they were written.
    public var fields: [(name: String, value: String)] { storage.map { ($0.name, $0.value) } }

    /// An empty list.
    public init() {}

    /// An empty list with room for `capacity` fields.
    init(capacity: Int) { storage.reserveCapacity(capacity) }

    /// A list from literal pairs, in order (with room for one more, such as a `Set-Cookie`).
    public init(dictionaryLiteral elements: (String, String)...) {
        storage.reserveCapacity(elements.count + 1)
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// The first value of the field `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        storage.first { HTTPHeaders.equalNames($0.name, name) }?.value
    }

    /// Every value of the field `name`, in order.
    public func values(for name: String) -> [String] {
        storage.filter { HTTPHeaders.equalNames($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any others of the same name (as `Set-Cookie` needs).
    public mutating func add(name: String, value: String) {
        storage.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one field holding `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        add(name: name, value: value)
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        storage.removeAll { HTTPHeaders.equalNames($0.name, name) }
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

    /// ASCII case-insensitive comparison of two field names, without allocating.
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        // Names are usually written as the code that looks them up writes them.
        if lhs == rhs { return true }
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        for (a, b) in zip(lhs.utf8, rhs.utf8) where a != b && lowercased(a) != lowercased(b) { return false }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
