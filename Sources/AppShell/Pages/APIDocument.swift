import AppShellJSON

/// An app's OpenAPI 3.1 document, served at `/api/openapi.json`: the framework's description of its
/// own routes (`Resources/APIDocumentTemplate.json`: the JSON API, the form endpoint, the event stream,
/// health, metrics, the page script, the installable app's files) completed, when the server
/// starts, with what the app declares — its name, its page URLs, the files its pages link, its
/// session cookie, and its actions with their typed parameters, derived from the screens' action
/// enums and the launch sources (`ShellApplication.actionCatalog`). No app writes it by hand.
enum APIDocument {
    /// What the document says of the app.
    struct App {
        /// The app's name: the document's title.
        var name: String
        /// The page URLs besides `/` (`/notes/:id`: a path parameter `id`).
        var pagePaths: [String]
        /// The app's own public files every page links (its stylesheets and scripts).
        var files: [String]
        /// The session cookie's name.
        var cookieName: String
        /// The paths the server routes (`/notes/:id`): the template's other paths are left out (an
        /// app that is not installable serves no manifest).
        var servedPaths: Set<String>
        /// Its actions: every screen's, then `launch` (and `show` when it has routes).
        var actions: [ActionDescription]
        /// The launch's sources, each with its parameters: `launch` is one of them.
        var launchSources: [ActionDescription]
    }

    /// The document for `app`.
    static func make(for app: App) -> JSON {
        // The template names the framework's default cookie; the app's may be another.
        let text = String(decoding: PackageResources.APIDocumentTemplate_json, as: UTF8.self)
            .replacing("appshell_session", with: app.cookieName)
        guard var document = try? JSON(parsing: text).objectValue else {
            preconditionFailure("Resources/APIDocumentTemplate.json is not a JSON object")
        }
        var info = document["info"]?.objectValue ?? [:]
        info["title"] = .string(app.name)
        info["description"] = info["description"]?.stringValue.map {
            .string($0.replacing("{{app}}", with: app.name))
        }
        document["info"] = .object(info)

        var paths = document["paths"]?.objectValue ?? [:]
        paths = paths.filter { app.servedPaths.contains($0.key) }
        if let page = paths["/"]?["get"] {
            for path in app.pagePaths { paths[openAPIPath(path)] = ["get": pageOperation(page, path)] }
        }
        if let file = document.removeValue(forKey: "x-appshell-file") {
            for name in app.files { paths["/" + name] = fileOperation(file, name) }
        }
        if var state = paths["/api/state"]?.objectValue, let links = linksToExamples(app.actions, app.cookieName) {
            state = state.setting(["get", "responses", "200", "links"], merging: links)
            paths["/api/state"] = .object(state)
        }
        document["paths"] = .object(paths)

        var components = document["components"]?.objectValue ?? [:]
        var schemas = components["schemas"]?.objectValue ?? [:]
        var references: [JSON] = []
        var mapping: [String: JSON] = [:]
        for action in app.actions {
            let name = schemaName(action.name)
            schemas[name] =
                action.name == ActionDescription.launch.name
                ? launchSchema(app.launchSources, action) : actionSchema(action)
            references.append(["$ref": .string("#/components/schemas/" + name)])
            mapping[action.name] = .string("#/components/schemas/" + name)
        }
        var union = schemas["Action"]?.objectValue ?? [:]
        union["oneOf"] = .array(references)
        union["discriminator"] = ["propertyName": "action", "mapping": .object(mapping)]
        schemas["Action"] = .object(union)
        schemas["ActionForm"] = formSchema(schemas["ActionForm"], app.actions)
        components["schemas"] = .object(schemas)
        document["components"] = .object(components)
        return .object(document)
    }

    // MARK: Pages and files

    /// `/notes/:id` as OpenAPI writes it: `/notes/{id}`.
    static func openAPIPath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? "{" + segment.dropFirst() + "}" : String(segment)
        }.joined(separator: "/")
    }

    /// `/`'s operation for the page at `path`: its own id and summary, its path parameters, and
    /// 404 when a parameter may name nothing.
    private static func pageOperation(_ page: JSON, _ path: String) -> JSON {
        guard var operation = page.objectValue else { return page }
        let words = path.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map {
            $0.prefix(1).uppercased() + $0.dropFirst()
        }
        operation["operationId"] = .string("page" + words.joined())
        operation["summary"] = .string("The page at \(path)")
        let names = path.split(separator: "/").filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) }
        if !names.isEmpty {
            let parameters = names.map { name -> JSON in
                [
                    "name": .string(name), "in": "path", "required": true,
                    "schema": ["type": "string", "pattern": "^[^/\\x00]+$"],
                    "description": "A path segment: a page it names nothing on is 404.",
                ]
            }
            operation["parameters"] = .array((operation["parameters"]?.arrayValue ?? []) + parameters)
            var responses = operation["responses"]?.objectValue ?? [:]
            responses["404"] = ["$ref": "#/components/responses/NotFound"]
            operation["responses"] = .object(responses)
        }
        return .object(operation)
    }

    /// The static file operation of the template for the public file `name`.
    private static func fileOperation(_ file: JSON, _ name: String) -> JSON {
        let kind = name.hasSuffix(".css") ? "style sheet" : name.hasSuffix(".js") ? "script" : "file"
        let media = name.hasSuffix(".css") ? "text/css" : name.hasSuffix(".js") ? "text/javascript" : "*/*"
        let words = name.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map {
            $0.prefix(1).uppercased() + $0.dropFirst()
        }
        let text = String(decoding: file.serialized, as: UTF8.self)
            .replacing("{{operationId}}", with: "static" + words.joined())
            .replacing("{{summary}}", with: "The pages' \(kind) \(name) (a static file)")
            .replacing("{{mediaType}}", with: media)
        return (try? JSON(parsing: text)) ?? file
    }

    // MARK: Actions

    /// `showList` → `ShowListAction`.
    static func schemaName(_ action: String) -> String { action.prefix(1).uppercased() + action.dropFirst() + "Action" }

    /// The action's body: its name, its typed parameters, the framework's `next`, its example.
    private static func actionSchema(_ action: ActionDescription) -> JSON {
        var properties: [String: JSON] = [
            "action": ["const": .string(action.name)],
            "next": [
                "description":
                    "A same-site path (one leading `/`) opened after the action succeeds; any other value is ignored."
            ],
        ]
        for parameter in action.parameters { properties[parameter.name] = schema(of: parameter) }
        var example = action.example
        example["action"] = .string(action.name)
        return [
            "type": "object",
            "description": .string(
                "`\(action.name)`, offered by the screens whose actions have it (409 on another: the state with `error`)."
            ),
            "required": .array((["action"] + action.requiredParameters).map { .string($0) }),
            "properties": .object(properties),
            "examples": [.object(example)],
        ]
    }

    /// `launch`: one body per source, `source` naming it beside its parameters; with no source,
    /// the catalogue's description (any `source` is 400).
    private static func launchSchema(_ sources: [ActionDescription], _ launch: ActionDescription) -> JSON {
        let bodies = sources.map { source -> JSON in
            guard var body = actionSchema(source).objectValue, var properties = body["properties"]?.objectValue else {
                return .null
            }
            properties["action"] = ["const": .string(launch.name)]
            properties["source"] = ["const": .string(source.name)]
            body["properties"] = .object(properties)
            body["required"] = .array((["action", "source"] + source.requiredParameters).map { .string($0) })
            var example = source.example
            example["action"] = .string(launch.name)
            example["source"] = .string(source.name)
            body["examples"] = [.object(example)]
            body["description"] = .string("`launch` from `\(source.name)`: the app was opened from it, on any screen.")
            return .object(body)
        }
        switch bodies.count {
        case 0: return actionSchema(launch)
        case 1: return bodies[0]
        default: return ["oneOf": .array(bodies)]
        }
    }

    /// What a parameter may be, in JSON or as a form's text (`FormNumber`): an integer is a JSON
    /// integer or its decimal digits; an optional one may also be `null` or empty.
    static func schema(of parameter: ActionParameter) -> JSON {
        var base: JSON
        switch parameter.type {
        case .string:
            base = ["type": "string"]
            if let choices = parameter.choices { base = ["enum": .array(choices.map { .string($0) })] }
        case .integer:
            base = [
                "oneOf": [
                    ["type": "integer", "minimum": .integer(Int.min), "maximum": .integer(Int.max)],
                    ["type": "string", "pattern": .string(FormNumber.integerPattern)],
                ]
            ]
        case .number:
            base = ["oneOf": [["type": "number"], ["type": "string", "pattern": .string(FormNumber.numberPattern)]]]
        case .boolean:
            base = ["oneOf": [["type": "boolean"], ["enum": ["true", "false", "on", "off", "1", "0", ""]]]]
        }
        guard !parameter.isRequired else { return base }
        return ["anyOf": [base, ["type": "null"], ["const": ""]]]
    }

    /// The form endpoint's body: its template's members and every action's parameters, as text.
    private static func formSchema(_ template: JSON?, _ actions: [ActionDescription]) -> JSON? {
        guard var form = template?.objectValue, var properties = form["properties"]?.objectValue else {
            return template
        }
        let text = form["additionalProperties"] ?? ["type": "string"]
        for action in actions {
            for parameter in action.parameters where properties[parameter.name] == nil {
                properties[parameter.name] = text
            }
        }
        form["properties"] = .object(properties)
        return .object(form)
    }

    /// From the state, a link to each action with an example: the stateful tests send it (a
    /// login with the demo's account, say) with the session's id.
    private static func linksToExamples(_ actions: [ActionDescription], _ cookie: String) -> JSON? {
        var links: [String: JSON] = [:]
        for action in actions where !action.example.isEmpty {
            var body = action.example
            body["action"] = .string(action.name)
            links["Perform" + schemaName(action.name).dropLast("Action".count)] = [
                "operationId": "performAction",
                "description": .string("Send `\(action.name)` with its example's parameters, with the session's id."),
                "parameters": [
                    "cookie." + cookie: .string("$response.header.Set-Cookie#regex:\(cookie)=([A-Za-z0-9_-]+)")
                ],
                "requestBody": .object(body),
            ]
        }
        return links.isEmpty ? nil : .object(links)
    }
}

extension Dictionary where Key == String, Value == JSON {
    /// The dictionary with the object at `path` (made where missing) given `members` too.
    fileprivate func setting(_ path: [String], merging members: JSON) -> [String: JSON] {
        var copy = self
        guard let first = path.first else {
            for (key, value) in members.objectValue ?? [:] { copy[key] = value }
            return copy
        }
        copy[first] = .object((self[first]?.objectValue ?? [:]).setting(Array(path.dropFirst()), merging: members))
        return copy
    }
}
