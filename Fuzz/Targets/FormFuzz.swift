@testable import AppShellHTTP

/// `application/x-www-form-urlencoded` bodies (the HTML forms' `POST /actions`, `POST /login`).
public enum FormFuzz {
    /// A body decodes to the first value of each name, or is a 400; the pairs re-encoded decode
    /// to the same pairs; a query with the same bytes gives the same pairs.
    public static func run(_ data: [UInt8]) {
        let request = try! Request(
            method: .post, target: "/actions", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: data)
        let pairs = data.withUnsafeBufferPointer { PercentEncoding.decodePairs($0) }
        let fields: [String: String]
        do {
            fields = try request.decodeForm()
        } catch {
            FuzzCheck.require(error.status.rawValue == 400, "unexpected status \(error.status)")
            FuzzCheck.require(pairs == nil, "decodeForm refused what decodePairs accepted")
            return
        }
        guard let pairs else {
            FuzzCheck.require(false, "decodeForm accepted what decodePairs refused")
            return
        }
        for (name, value) in pairs.reversed() where pairs.first(where: { $0.name == name })?.value == value {
            FuzzCheck.require(fields[name] == value, "the field \(name) is not its first value")
        }
        FuzzCheck.require(Set(pairs.map(\.name)) == Set(fields.keys), "the field names differ from the pairs'")
        let encoded = Array(
            pairs.map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }.joined(
                separator: "&"
            ).utf8)
        let again = encoded.withUnsafeBufferPointer { PercentEncoding.decodePairs($0) }
        FuzzCheck.require(
            again?.map(\.name) == pairs.map(\.name) && again?.map(\.value) == pairs.map(\.value),
            "the pairs differ after a round trip")
        // The same bytes as a query (where they contain no `#`, `?` is fine in a query).
        if !data.contains(0), let query = String(validating: data, as: UTF8.self) {
            if let asQuery = try? Request(method: .get, target: "/?" + query) {
                FuzzCheck.require(
                    asQuery.queryItems.map(\.name) == pairs.map(\.name)
                        && asQuery.queryItems.map(\.value) == pairs.map(\.value),
                    "the query's pairs differ from the form's")
            }
        }
    }
}
