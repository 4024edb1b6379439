import AppShellJSON
import AppShellTesting
import Testing

/// Notes serves its own OpenAPI document, made by the framework from its declarations: its pages,
/// its cookie, its actions with their typed parameters and its launch source — no file of its own.
@Suite struct APIDocumentTests {
    static func document() throws -> JSON {
        let notes = try NotesHarness(.inProcess)
        let response = try notes.client.get("/api/openapi.json")
        #expect(response.status == 200)
        return response.json
    }

    @Test func theDocumentDescribesNotesPagesAndCookie() throws {
        let document = try Self.document()
        #expect(document["openapi"] == "3.1.0")
        #expect(document["info"]?["title"] == "Notes")
        let paths = try #require(document["paths"]?.objectValue)
        for path in ["/", "/login", "/notes", "/notes/new", "/notes/{id}", "/api/state", "/api/actions", "/notes.css"] {
            #expect(paths[path] != nil, "\(path) is not described")
        }
        // Notes is not installable: no manifest, worker or offline page.
        #expect(paths["/sw.js"] == nil && paths["/manifest.webmanifest"] == nil)
        let note = try #require(paths["/notes/{id}"]?["get"])
        #expect(note["responses"]?["404"] != nil)
        #expect(note["parameters"]?.arrayValue?.contains { $0["name"] == "id" && $0["in"] == "path" } == true)
        #expect(
            note["parameters"]?.arrayValue?.contains { $0["name"] == "notes_session" && $0["in"] == "cookie" } == true)
    }

    @Test func theActionsAreTheScreensTypedActions() throws {
        let schemas = try #require(try Self.document()["components"]?["schemas"])
        let mapping = try #require(schemas["Action"]?["discriminator"]?["mapping"]?.objectValue)
        #expect(
            Set(mapping.keys) == [
                "open", "compose", "logout", "back", "delete", "save", "cancel", "login", "launch", "createAccount",
                "signUp", "logIn", "account", "changePassword", "logOutEverywhere", "close",
            ])
        let open = try #require(schemas["OpenAction"])
        #expect(open["required"] == ["action", "id"])
        #expect(open["properties"]?["id"]?["oneOf"]?[0]?["type"] == "integer")
        #expect(open["examples"]?[0] == ["action": "open", "id": 1])
        let save = try #require(schemas["SaveAction"])
        #expect(save["required"] == ["action", "title", "body"])
        #expect(save["properties"]?["title"]?["type"] == "string")
        let login = try #require(schemas["LoginAction"])
        #expect(login["required"] == ["action", "username", "password"])
        #expect(login["properties"]?["next"]?["anyOf"] != nil)
        let launch = try #require(schemas["LaunchAction"])
        // One source: `note`, with its note's id.
        #expect(launch["properties"]?["source"]?["const"] == "note")
        #expect(launch["required"] == ["action", "source", "id"])
        #expect(launch["examples"]?[0] == ["action": "launch", "source": "note", "id": 1])
        // The form endpoint takes every parameter as text.
        let form = try #require(schemas["ActionForm"]?["properties"]?.objectValue)
        for name in ["id", "title", "body", "username", "password", "source", "next"] {
            #expect(form[name] != nil, "\(name) is not a form field")
        }
    }
}

extension JSON {
    /// The element at `index` of an array, for the tests.
    fileprivate subscript(index: Int) -> JSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
