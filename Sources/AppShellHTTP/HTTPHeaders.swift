/// An ordered list of header fields whose names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in the order they were added, with names as they were written.
    public private(set) var fields: [(name: String, value: String)] = []

    /// An empty list.
    public init() {}

    /// An empty list with room for `capacity` fields.
    init(capacity: Int) { fields.reserveCapacity(capacity) }

    /// A list from literal pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name: name, value: value) }
    }

    /// The first value of the field `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first { HTTPHeaders.equalNames($0.name, name) }?.value
    }

    /// Every value of the field `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { HTTPHeaders.equalNames($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping any others of the same name (as `Set-Cookie` needs).
    public mutating func add(name: String, value: String) {
        fields.append((name, value))
    }

    /// Replaces every field named `name` with one field holding `value`.
    public mutating func replaceOrAdd(name: String, value: String) {
        remove(name: name)
        fields.append((name, value))
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { HTTPHeaders.equalNames($0.name, name) }
    }

    /// Whether a field named `name` is present.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// ASCII case-insensitive comparison of two field names, without allocating.
    static func equalNames(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        for (a, b) in zip(left, right) where a != b && lowercased(a) != lowercased(b) { return false }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }
}
