import AppShellJSON
import Foundation

/// How `logIn` goes through an app's login: its JSON action or its page's form.
public enum LoginPath: Sendable {
    /// `POST /api/actions` with `{"action": action, usernameField: …, passwordField: …}`.
    case json(action: String = "login", usernameField: String = "username", passwordField: String = "password")
    /// The login form of the page at `page`, as a browser without JavaScript sends it: the form
    /// with a password field, the username typed into its one other visible field.
    case form(page: String = "/login")
}

/// What a test does as a user of an AppShell app, on either client (live or in process): reads
/// the state, sends actions, opens pages, submits their forms — reading the form's hidden fields
/// and token from the page, as a browser without JavaScript does — follows redirects and logs in.
///
/// ```swift
/// let client = try TestServer(mode, responder: try app.server.makeResponder()).client()
/// try client.logIn(username: "demo", password: "notes")
/// let saved = try client.follow(client.submit("save", on: "/notes/new", ["title": "Tea"]))
/// #expect(try client.state()["screen"] == "notes")
/// ```
extension HTTPTestClient {
    /// `GET /api/state` as JSON; throws unless it answers 200 with JSON.
    public func state() throws -> JSON {
        let response = try get("/api/state")
        guard response.status == 200, response.json != .null else {
            throw TestClientError(description: "GET /api/state answered \(response.status): \(response.text)")
        }
        return response.json
    }

    /// `POST /api/actions` with `json` (`{"action": name, …}`); the answer, whatever its status.
    @discardableResult
    public func act(_ json: String) throws -> TestResponse { try postJSON("/api/actions", json) }

    /// `POST /api/actions` with the action `name` and its `parameters`.
    @discardableResult
    public func act(_ name: String, _ parameters: [String: JSON]) throws -> TestResponse {
        try act(JSON.object(parameters.merging(["action": .string(name)]) { _, new in new }).serializedString)
    }

    /// Polls `GET /api/state` until `condition` holds of it, and returns that state — for what
    /// happens with no request (the splash finishing, a scheduled notification). Throws with the
    /// last state after `timeoutSeconds`.
    @discardableResult
    public func waitForState(timeoutSeconds: Double = 10, until condition: (JSON) -> Bool) throws -> JSON {
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while true {
            let state = try state()
            if condition(state) { return state }
            guard Date() < deadline else {
                throw TestClientError(description: "the state did not come within \(timeoutSeconds) s: \(state)")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// `GET path` as a browser opens a page (`Accept: text/html`), not following a redirect.
    public func page(_ path: String) throws -> TestResponse { try get(path, headers: [("Accept", "text/html")]) }

    /// The forms of the page at `path` (throws when it does not answer 200).
    public func forms(on path: String) throws -> [HTMLForm] {
        let page = try page(path)
        guard page.status == 200 else {
            throw TestClientError(description: "GET \(path) answered \(page.status), not a page with forms")
        }
        return HTMLForm.forms(in: page.text)
    }

    /// Submits the form that sends `action` on the page at `path` with `values` typed into its
    /// fields, as a browser without JavaScript: the page is read for the form (its hidden fields,
    /// the session's token), and the form is posted to its target (`/actions`) with this site's
    /// `Origin`. Of several such forms (the list's `open` buttons), the first whose hidden fields
    /// agree with `values` (`["id": "2"]`). The answer is not followed (see `follow`).
    @discardableResult
    public func submit(_ action: String, on path: String, _ values: [String: String] = [:]) throws -> TestResponse {
        let forms = try forms(on: path)
        guard let form = forms.first(where: { $0.action == action && $0.agrees(with: values) }) else {
            let offered = forms.compactMap(\.action).joined(separator: ", ")
            throw TestClientError(
                description: "no form sends \"\(action)\" with \(values) on \(path); its forms send: \(offered)")
        }
        return try submit(form, values, from: path)
    }

    /// Submits `form`, read from the page at `path`, with `values` typed into its fields.
    @discardableResult
    public func submit(_ form: HTMLForm, _ values: [String: String] = [:], from path: String) throws -> TestResponse {
        let body = HTMLForm.encode(try form.filled(with: values))
        let target = form.target.isEmpty ? path : form.target
        if form.method != "post" {
            // A GET form replaces the target's query with its fields.
            return try page((target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target) + "?" + body)
        }
        return try postForm(target, body, headers: [("Accept", "text/html"), ("Origin", origin)])
    }

    /// Follows `response` while it is a redirect (301, 302, 303, 307, 308) to this site, with a
    /// `GET` as a browser does after a form, the cookie jar kept; returns the first answer that is
    /// not one — or a redirect elsewhere, which it leaves to the test. Throws after `limit`.
    public func follow(_ response: TestResponse, limit: Int = 10) throws -> TestResponse {
        var response = response
        for _ in 0...limit {
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"],
                let path = sameSitePath(location)
            else { return response }
            response = try page(path)
        }
        throw TestClientError(
            description: "more than \(limit) redirects, the last to \(response.headers["Location"] ?? "")")
    }

    /// Logs in as `username` with `password` through `path`: the answer — for the JSON action the
    /// new state, for the form the page its redirect leads to. A refusal is returned as well
    /// (401 from the JSON action; the login page again, with its message, from the form).
    @discardableResult
    public func logIn(username: String, password: String, through path: LoginPath = .json()) throws -> TestResponse {
        switch path {
        case .json(let action, let usernameField, let passwordField):
            return try act(action, [usernameField: .string(username), passwordField: .string(password)])
        case .form(let page):
            let forms = try forms(on: page)
            guard let form = forms.first(where: { $0.fields.contains { $0.type == "password" } }),
                let secret = form.fields.first(where: { $0.type == "password" }),
                let name = form.fields.first(where: { ["text", "email"].contains($0.type) })
            else {
                throw TestClientError(description: "no login form (a username and a password field) on \(page)")
            }
            return try follow(submit(form, [name.name: username, secret.name: password], from: page))
        }
    }

    /// The path of `location` when it is on this site (a path, or a URL of this origin).
    private func sameSitePath(_ location: String) -> String? {
        if location.hasPrefix("/") { return location.hasPrefix("//") ? nil : location }
        guard location.hasPrefix(origin + "/") else { return nil }
        return String(location.dropFirst(origin.count))
    }
}
