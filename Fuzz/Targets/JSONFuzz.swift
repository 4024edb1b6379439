import AppShellJSON

/// The strict JSON parser (API bodies, `config.json`, `APPSHELL_USERS`) and the serializer.
public enum JSONFuzz {
    /// Bytes parse to a value or throw `JSONError` (with a position inside the input); a value
    /// serializes to text that parses to the same value, and serializing that gives the same text.
    public static func run(_ data: [UInt8]) {
        let value: JSON
        do {
            value = try JSON(parsing: data)
        } catch {
            FuzzCheck.require(error.line >= 1 && error.column >= 1, "an error without a position: \(error)")
            return
        }
        let text = value.serialized
        guard let again = try? JSON(parsing: text) else {
            FuzzCheck.require(false, "the serialized value does not parse: \(value.serializedString)")
            return
        }
        FuzzCheck.require(again == value, "the value changed in a round trip: \(value.serializedString)")
        FuzzCheck.require(again.serialized == text, "serializing is not stable: \(value.serializedString)")
    }
}
