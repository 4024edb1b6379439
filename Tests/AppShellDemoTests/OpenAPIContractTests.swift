import AppShell
import AppShellDemo
import AppShellHTTP
import AppShellJSON
import AppShellTesting
import Foundation
import Testing

/// The demo's OpenAPI document (made by the framework from the app's declarations, served at
/// `/api/openapi.json`) against the router: every route is described, every described path is
/// served, and a method a path does not list gets 405 with `Allow`. Schemathesis checks the rest
/// against a live server (`make contract-test`).
@Suite struct OpenAPIContractTests {
    static func document() throws -> JSON {
        try ShellAPITests.makeApp(splashDelay: 0, maxSessionsInMemory: nil).server.apiDescription()
    }

    /// The document's operations: path (with `{name}` captures) → lowercased methods.
    static func operations(_ document: JSON) throws -> [String: Set<String>] {
        let paths = try #require(document["paths"]?.objectValue)
        let methods: Set<String> = ["get", "head", "post", "put", "delete", "patch", "options", "trace", "query"]
        return paths.mapValues { item in Set((item.objectValue ?? [:]).keys.filter { methods.contains($0) }) }
    }

    /// The methods the server knows that no operation of a path lists (`HEAD` goes with `GET`).
    static let probedMethods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "QUERY"]

    @Test func everyRouteIsDescribedAndEveryDescribedPathIsServed() throws {
        let (app, _) = try ShellAPITests.start()
        let router = try app.makeResponder()
        let described = try Self.operations(try Self.document())
        var routed: [String: Set<String>] = [:]
        for route in router.routeList {
            // `/items/:id` is `/items/{id}` in OpenAPI.
            let path = route.path.split(separator: "/", omittingEmptySubsequences: false).map {
                $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0)
            }.joined(separator: "/")
            routed[path, default: []].insert(route.method.rawValue.lowercased())
        }
        #expect(routed.count >= 11)
        for (path, methods) in routed {
            #expect(
                described[path] == methods, "route \(path) \(methods.sorted()) is described as \(described[path] ?? [])"
            )
        }
        // A described path no route has must be a static file in the public directory (GET only).
        let publicDirectory = CommandTests.packageRoot.appendingPathComponent("Public").path
        for (path, methods) in described where routed[path] == nil {
            #expect(
                FileManager.default.fileExists(atPath: publicDirectory + path), "\(path) is neither routed nor a file")
            #expect(methods == ["get"], "static file \(path) is described with \(methods.sorted())")
        }
    }

    @Test func theDocumentIsOpenAPI31AndEveryActionIsInTheDiscriminator() throws {
        let document = try Self.document()
        #expect(document["openapi"]?.stringValue == "3.1.0")
        let mapping = try #require(
            document["components"]?["schemas"]?["Action"]?["discriminator"]?["mapping"]?.objectValue)
        let environment = DemoEnvironment(splashDelayMilliseconds: 0)
        #expect(Set(mapping.keys) == DemoApp(environment: environment).knownActions)
    }

    /// The document's actions are the screens' typed actions: each one's required members are
    /// `action` and the parameters its enum case names, in that order.
    @Test func theDocumentsActionParametersAreTheTypedActions() throws {
        let document = try Self.document()
        let schemas = try #require(document["components"]?["schemas"])
        let mapping = try #require(schemas["Action"]?["discriminator"]?["mapping"]?.objectValue)
        let catalog = DemoApp(environment: DemoEnvironment(splashDelayMilliseconds: 0)).actionCatalog
        #expect(catalog.map(\.name).sorted() == mapping.keys.sorted())
        for action in catalog {
            let reference = try #require(mapping[action.name]?.stringValue)
            let schema = try #require(schemas[String(reference.split(separator: "/").last ?? "")])
            let required = (schema["required"]?.arrayValue ?? []).compactMap(\.stringValue)
            #expect(required == ["action"] + action.requiredParameters, "\(action.name)")
            #expect(schema["properties"]?["action"]?["const"]?.stringValue == action.name)
        }
    }

    @Test func theServerServesItsDocumentWithoutASession() throws {
        let (app, live) = try ShellAPITests.start()
        defer { _ = live.stop() }
        let response = try live.client().get(ShellServer.apiDescriptionPath)
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"]?.hasPrefix("application/json") == true)
        #expect(response.headers["Set-Cookie"] == nil)
        #expect(response.json == (try app.server.apiDescription()))
        // No copy in the public directory: the app writes none.
        #expect(
            !FileManager.default.fileExists(
                atPath: CommandTests.packageRoot.appendingPathComponent("Public/openapi.json").path))
    }

    /// "A method a path does not list gets 405 with `Allow`": every described path, every method
    /// the server knows (`QUERY` too; `CONNECT` is 501), `Allow` naming exactly what is described.
    @Test func aMethodAPathDoesNotListGets405WithAllow() throws {
        let (_, live) = try ShellAPITests.start()
        defer { _ = live.stop() }
        for (path, methods) in try Self.operations(try Self.document()) {
            var allowed = Set(methods.map { $0.uppercased() })
            if allowed.contains("GET") { allowed.insert("HEAD") }
            for method in Self.probedMethods where !allowed.contains(method) {
                // A fresh connection each: a refused body can close the connection.
                let client = live.client()
                let response = try client.send(method, path)
                #expect(response.status == 405, "\(method) \(path) → \(response.status)")
                let allow = Set(
                    (response.headers["Allow"] ?? "").split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    })
                #expect(allow == allowed, "\(method) \(path): Allow \(allow.sorted()), described \(allowed.sorted())")
                // A HEAD answer has no body to say why.
                if method != "HEAD" { #expect(response.json["error"]?.stringValue != nil, "\(method) \(path)") }
            }
        }
    }

    @Test func aMalformedFormSaysWhatWasWrongIncludingANulByte() throws {
        let (_, live) = try ShellAPITests.start()
        defer { _ = live.stop() }
        let client = live.client()
        _ = try client.get("/api/state")
        let response = try client.postForm("/actions", "csrf=x&action=a%00b")
        #expect(response.status == 400)
        #expect(response.json["error"]?.stringValue?.contains("NUL byte") == true)
    }
}
