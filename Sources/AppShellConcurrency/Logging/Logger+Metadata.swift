import AppShellJSON

extension Logger {
    /// A metadata value: a JSON value, since the server's own lines are JSON (`.string`, `.integer`,
    /// `.bool`, arrays and objects); a literal of any of these kinds will do.
    public typealias MetadataValue = JSON

    /// An entry's or a logger's metadata: names and values, in the order they were given (the
    /// access log's fields keep their order on the line), each name at most once.
    ///
    /// Written as a dictionary literal: `["requestID": .string(id), "status": 200]`.
    public struct Metadata: Sendable, ExpressibleByDictionaryLiteral, Sequence {
        /// The names and values in order.
        public private(set) var entries: [(key: String, value: MetadataValue)]

        /// Metadata of `elements` in their order; a repeated name keeps its last value, in the
        /// place of its first.
        public init(dictionaryLiteral elements: (String, MetadataValue)...) {
            entries = []
            entries.reserveCapacity(elements.count)
            for (key, value) in elements { self[key] = value }
        }

        /// Whether there is no value.
        public var isEmpty: Bool { entries.isEmpty }

        /// The value named `key`; setting `nil` removes it, setting a new name appends it.
        public subscript(key: String) -> MetadataValue? {
            get { entries.first { $0.key == key }?.value }
            set {
                let index = entries.firstIndex { $0.key == key }
                switch (index, newValue) {
                case (let index?, let value?): entries[index].value = value
                case (let index?, nil): entries.remove(at: index)
                case (nil, let value?): entries.append((key, value))
                case (nil, nil): break
                }
            }
        }

        /// These values with `other`'s added: `other`'s value wins for a name both have.
        public func merging(_ other: Metadata) -> Metadata {
            var merged = self
            for (key, value) in other.entries { merged[key] = value }
            return merged
        }

        /// The names and values in order.
        public func makeIterator() -> IndexingIterator<[(key: String, value: MetadataValue)]> {
            entries.makeIterator()
        }
    }
}
