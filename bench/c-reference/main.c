/*
 * The C reference server of `make bench`: the least a server on libmicrohttpd has to do for
 * AppShell's session endpoints, written plainly in C. AppShell's figures are read as ratios to it.
 *
 *   GET  /api/state    the caller's session as JSON. The session is found by its cookie in a map
 *                      of 64 shards (one mutex each); a missing or unknown cookie makes a new
 *                      session (32 bytes from getrandom, hex in the cookie) and sets the cookie
 *                      (HttpOnly; SameSite=Lax; Path=/).
 *   GET  /api/stats    {"sessions":N}
 *   POST /api/actions  {"action":"showList"} or {"action":"pop"} for a known session: moves its
 *                      screen between main and list and answers the new state as JSON. 409 when
 *                      the screen does not offer the action, 403 when the session is unknown,
 *                      400 for a body without an action, 413 for a body over 64 KiB. With STORE
 *                      set, a done action first writes a SNAPSHOT_BYTES blob for the session into
 *                      SQLite and commits (WAL, synchronous=NORMAL, one connection per server
 *                      thread): the plain way to make each action durable before answering.
 *
 * usage: c-reference PORT [MODE [THREADS [TURBO]]]
 *   PORT     0 picks a free port; the bound one is printed: "listening on N ..."
 *   MODE     pool    epoll, a pool of THREADS threads (the default)
 *            single  epoll, one thread
 *            tpc     a thread per connection (poll)
 *            auto    libmicrohttpd's choice of polling, a pool of THREADS threads
 *   THREADS  pool size (default 2)
 *   TURBO    1 adds MHD_USE_TURBO (default 0)
 * It binds 127.0.0.1 only and stops on SIGINT or SIGTERM.
 *
 * environment:
 *   COOKIE_NAME     the session cookie's name (default sid)
 *   BODY_BYTES      pad GET /api/state's JSON to exactly this many bytes (at most 65536)
 *   ACTION_BYTES    pad POST /api/actions' JSON to exactly this many bytes (at most 65536)
 *   STORE           SQLite file that a done action writes to (none: actions live in memory only)
 *   SNAPSHOT_BYTES  bytes written per action with STORE (default 1024)
 *   TLS_CERT        with TLS_KEY: serve HTTPS only (libmicrohttpd's GnuTLS), this PEM certificate
 *   TLS_KEY         ... and this PEM private key, with AppShell's GnuTLS priorities (TLS_PRIORITIES)
 *   CONNECTION_LIMIT  open connections at most (default: libmicrohttpd's, about 1020), shared by
 *                   the pool's threads; at the limit further connections wait, not accepted
 *   CONNECTION_TIMEOUT  seconds an idle connection is kept (default 30)
 *
 * The padding makes this server send as many bytes as the server it is compared with, so that
 * both pay the same for copying and sending.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <microhttpd.h>
#include <sqlite3.h>

enum {
  ID_BYTES = 32,         /* a session id: 32 random bytes */
  ID_HEX = 2 * ID_BYTES, /* ... written as 64 lowercase hex digits in the cookie */
  SHARDS = 64,           /* the session map's shards, one mutex each */
  MAX_PAD = 65536,       /* BODY_BYTES and ACTION_BYTES at most */
  MAX_UPLOAD = 65536,    /* a POST body at most (one byte less, for the terminating zero) */
  JSON_HEAD = 320,       /* room for a JSON answer before its padding */
};

/* --- settings ------------------------------------------------------------------------------ */

static const char *cookie_name = "sid";
static size_t body_bytes;      /* 0: GET /api/state's JSON as it comes */
static size_t action_bytes;    /* 0: POST /api/actions' JSON as it comes */
static const char *store_path; /* NULL: actions are not written anywhere */
static size_t snapshot_bytes = 1024;
static char *snapshot;         /* the blob written per action: snapshot_bytes of 's' */

/* The GnuTLS priorities with TLS_CERT and TLS_KEY: the same string as AppShell's
 * (TLSCertificates.priorities in Sources/AppShellHTTP/Network/TLSCertificates.swift: TLS 1.3 and 1.2,
 * Mozilla's "intermediate" ciphers), so that both servers negotiate the same protocol, key
 * exchange and cipher. Keep the two equal: bench/run.py --self-test compares them. */
static const char TLS_PRIORITIES[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305"
    ":-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:+DHE-RSA"
    ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:+GROUP-SECP384R1:+GROUP-FFDHE2048:%SERVER_PRECEDENCE";

/* A size from the environment, capped at `max`; `fallback` when the variable is not set. */
static size_t env_size(const char *name, size_t fallback, size_t max) {
  const char *text = getenv(name);
  if (!text || !*text) return fallback;
  size_t value = (size_t)strtoull(text, NULL, 10);
  return value > max ? max : value;
}

/* A whole file as a NUL-terminated string (libmicrohttpd takes its certificate and key as PEM
 * text), or NULL when it cannot be read. */
static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  size_t length = 0, capacity = 4096;
  char *text = malloc(capacity);
  while (text) {
    length += fread(text + length, 1, capacity - 1 - length, file);
    if (length < capacity - 1) break;
    char *grown = realloc(text, 2 * capacity);
    if (!grown) free(text);
    text = grown;
    capacity *= 2;
  }
  int failed = ferror(file);
  fclose(file);
  if (!text || failed) {
    free(text);
    return NULL;
  }
  text[length] = 0;
  return text;
}

/* --- sessions ------------------------------------------------------------------------------ */

struct session {
  uint8_t id[ID_BYTES];
  uint64_t requests; /* requests seen for it (state and actions) */
  int on_list;       /* the screen: 0 main, 1 list (main with list pushed on it) */
  time_t created;
  struct session *next; /* the next session in the same bucket */
};

/* One shard: a hash table with chained buckets, grown to keep one session per bucket or fewer. */
struct shard {
  pthread_mutex_t lock;
  struct session **buckets;
  size_t capacity; /* a power of two */
  size_t count;
};

static struct shard shards[SHARDS];

/* Ids are uniformly random: their first word is a good hash as it is. The shard takes the low
 * bits, the bucket the bits above them. */
static uint64_t id_hash(const uint8_t *id) {
  uint64_t hash;
  memcpy(&hash, id, sizeof hash);
  return hash;
}

static struct shard *shard_of(uint64_t hash) { return &shards[hash % SHARDS]; }

static size_t bucket_of(const struct shard *shard, uint64_t hash) {
  return (size_t)(hash / SHARDS) & (shard->capacity - 1);
}

static void sessions_init(void) {
  for (int i = 0; i < SHARDS; i++) {
    pthread_mutex_init(&shards[i].lock, NULL);
    shards[i].capacity = 1024;
    shards[i].buckets = calloc(shards[i].capacity, sizeof *shards[i].buckets);
    if (!shards[i].buckets) abort();
  }
}

/* Doubles a shard's table (under its lock). Without memory it keeps the old table: the chains
 * get longer, nothing is lost. */
static void shard_grow(struct shard *shard) {
  size_t old_capacity = shard->capacity;
  struct session **old = shard->buckets;
  struct session **grown = calloc(2 * old_capacity, sizeof *grown);
  if (!grown) return;
  shard->buckets = grown;
  shard->capacity = 2 * old_capacity;
  for (size_t i = 0; i < old_capacity; i++) {
    struct session *entry = old[i];
    while (entry) {
      struct session *next = entry->next;
      size_t bucket = bucket_of(shard, id_hash(entry->id));
      entry->next = grown[bucket];
      grown[bucket] = entry;
      entry = next;
    }
  }
  free(old);
}

/* The session with `id` in a locked shard, or NULL. */
static struct session *shard_find(struct shard *shard, const uint8_t *id) {
  for (struct session *entry = shard->buckets[bucket_of(shard, id_hash(id))]; entry;
       entry = entry->next)
    if (memcmp(entry->id, id, ID_BYTES) == 0) return entry;
  return NULL;
}

static size_t session_count(void) {
  size_t count = 0;
  for (int i = 0; i < SHARDS; i++) {
    pthread_mutex_lock(&shards[i].lock);
    count += shards[i].count;
    pthread_mutex_unlock(&shards[i].lock);
  }
  return count;
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

/* Decodes a cookie value of 64 lowercase hex digits into an id: 0 when it is one, -1 if not. */
static int decode_id(const char *text, uint8_t *id) {
  if (!text || strlen(text) != ID_HEX) return -1;
  for (int i = 0; i < ID_BYTES; i++) {
    int high = hex_digit(text[2 * i]), low = hex_digit(text[2 * i + 1]);
    if (high < 0 || low < 0) return -1;
    id[i] = (uint8_t)(high << 4 | low);
  }
  return 0;
}

static void encode_id(const uint8_t *id, char *hex /* ID_HEX + 1 bytes */) {
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < ID_BYTES; i++) {
    hex[2 * i] = digits[id[i] >> 4];
    hex[2 * i + 1] = digits[id[i] & 15];
  }
  hex[ID_HEX] = 0;
}

static int random_bytes(uint8_t *buffer, size_t count) {
  for (size_t done = 0; done < count;) {
    ssize_t got = getrandom(buffer + done, count - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    done += (size_t)got;
  }
  return 0;
}

/* GET /api/state's session work: counts a request for the cookie's session, or makes a new
 * session when the cookie names none. Gives the session's id and its request count, and sets
 * `*created`; 0 when a new session could not be made. */
static uint64_t touch_session(const char *cookie, uint8_t *id, int *created) {
  *created = 0;
  if (decode_id(cookie, id) == 0) {
    uint64_t hash = id_hash(id);
    struct shard *shard = shard_of(hash);
    pthread_mutex_lock(&shard->lock);
    struct session *found = shard_find(shard, id);
    uint64_t requests = found ? ++found->requests : 0;
    pthread_mutex_unlock(&shard->lock);
    if (found) return requests;
  }
  struct session *fresh = malloc(sizeof *fresh);
  if (!fresh || random_bytes(fresh->id, ID_BYTES) != 0) {
    free(fresh);
    return 0;
  }
  fresh->requests = 1;
  fresh->on_list = 0;
  fresh->created = time(NULL);
  uint64_t hash = id_hash(fresh->id);
  struct shard *shard = shard_of(hash);
  pthread_mutex_lock(&shard->lock);
  if (shard->count + 1 > shard->capacity) shard_grow(shard);
  size_t bucket = bucket_of(shard, hash);
  fresh->next = shard->buckets[bucket];
  shard->buckets[bucket] = fresh;
  shard->count++;
  pthread_mutex_unlock(&shard->lock);
  memcpy(id, fresh->id, ID_BYTES);
  *created = 1;
  return 1;
}

/* What an action did. */
enum outcome { NO_SESSION, NOT_OFFERED, DONE };

/* POST /api/actions' session work: applies the action (`name`, `length` bytes) to the cookie's
 * session under its shard's lock and gives the screen it shows afterwards. */
static enum outcome apply_action(const char *cookie, const char *name, size_t length,
                                 int *on_list) {
  uint8_t id[ID_BYTES];
  if (decode_id(cookie, id) != 0) return NO_SESSION;
  struct shard *shard = shard_of(id_hash(id));
  enum outcome outcome = NO_SESSION;
  pthread_mutex_lock(&shard->lock);
  struct session *session = shard_find(shard, id);
  if (session) {
    int push = length == 8 && memcmp(name, "showList", 8) == 0;
    int pop = length == 3 && memcmp(name, "pop", 3) == 0;
    if (push && !session->on_list) {
      session->on_list = 1;
      outcome = DONE;
    } else if (pop && session->on_list) {
      session->on_list = 0;
      outcome = DONE;
    } else {
      outcome = NOT_OFFERED;
    }
    session->requests++;
    *on_list = session->on_list;
  }
  pthread_mutex_unlock(&shard->lock);
  return outcome;
}

/* --- the store: one SQLite connection per server thread ------------------------------------ */

static __thread sqlite3 *store;
static __thread sqlite3_stmt *store_put;

/* Opens this thread's connection the first time it writes: 0 when it is open. */
static int store_open(void) {
  if (store_put) return 0;
  if (sqlite3_open(store_path, &store) != SQLITE_OK) return -1;
  sqlite3_busy_timeout(store, 5000);
  if (sqlite3_exec(store,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                   "CREATE TABLE IF NOT EXISTS sessions(id BLOB PRIMARY KEY, snapshot BLOB)",
                   NULL, NULL, NULL) != SQLITE_OK)
    return -1;
  return sqlite3_prepare_v2(store, "INSERT OR REPLACE INTO sessions(id, snapshot) VALUES(?, ?)",
                            -1, &store_put, NULL) == SQLITE_OK ? 0 : -1;
}

/* Writes the session's snapshot, committed (autocommit: one transaction per statement) before
 * it returns: 0 when it is. */
static int store_write(const char *cookie) {
  uint8_t id[ID_BYTES];
  if (decode_id(cookie, id) != 0 || store_open() != 0) return -1;
  sqlite3_bind_blob(store_put, 1, id, ID_BYTES, SQLITE_STATIC);
  sqlite3_bind_blob(store_put, 2, snapshot, (int)snapshot_bytes, SQLITE_STATIC);
  int result = sqlite3_step(store_put);
  sqlite3_reset(store_put);
  return result == SQLITE_DONE ? 0 : -1;
}

/* --- answers ------------------------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *connection, unsigned status,
                              const char *body, size_t length, const char *set_cookie) {
  struct MHD_Response *response =
      MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (!response) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  if (set_cookie) MHD_add_response_header(response, MHD_HTTP_HEADER_SET_COOKIE, set_cookie);
  enum MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

#define ANSWER_LITERAL(connection, status, text) \
  answer((connection), (status), (text), sizeof(text) - 1, NULL)

/* Closes the JSON object of `length` bytes in `json` (JSON_HEAD + MAX_PAD bytes of room),
 * padded with a "pad" member of x's to `want` bytes when that is room enough for one. Gives the
 * final length. */
static size_t close_padded(char *json, size_t length, size_t want) {
  static const char open_pad[] = ",\"pad\":\"";
  size_t smallest = length + (sizeof open_pad - 1) + 2; /* ,"pad":"" and "} */
  if (want < smallest) {
    json[length] = '}';
    return length + 1;
  }
  size_t pad = want - smallest;
  memcpy(json + length, open_pad, sizeof open_pad - 1);
  memset(json + length + sizeof open_pad - 1, 'x', pad);
  memcpy(json + want - 2, "\"}", 2);
  return want;
}

static enum MHD_Result answer_state(struct MHD_Connection *connection) {
  const char *cookie = MHD_lookup_connection_value(connection, MHD_COOKIE_KIND, cookie_name);
  uint8_t id[ID_BYTES];
  int created;
  uint64_t requests = touch_session(cookie, id, &created);
  if (requests == 0) return ANSWER_LITERAL(connection, 500, "{\"error\":\"session\"}");
  char hex[ID_HEX + 1];
  encode_id(id, hex);
  char json[JSON_HEAD + MAX_PAD];
  int length = snprintf(json, JSON_HEAD,
                        "{\"session\":\"%.8s\",\"requests\":%" PRIu64 ",\"new\":%s,"
                        "\"user\":null,\"theme\":\"light\",\"locale\":\"en-US\","
                        "\"features\":{\"sse\":true,\"upload\":false},"
                        "\"server\":\"c-reference\",\"version\":1,\"items\":[1,2,3,4,5]",
                        hex, requests, created ? "true" : "false");
  size_t total = close_padded(json, (size_t)length, body_bytes);
  char set_cookie[ID_HEX + 128];
  if (created)
    snprintf(set_cookie, sizeof set_cookie, "%s=%s; HttpOnly; SameSite=Lax; Path=/", cookie_name,
             hex);
  return answer(connection, MHD_HTTP_OK, json, total, created ? set_cookie : NULL);
}

static enum MHD_Result answer_stats(struct MHD_Connection *connection) {
  char json[64];
  int length = snprintf(json, sizeof json, "{\"sessions\":%zu}", session_count());
  return answer(connection, MHD_HTTP_OK, json, (size_t)length, NULL);
}

/* A POST's body, collected as it arrives. */
struct upload {
  size_t length;
  int too_large;
  char bytes[MAX_UPLOAD];
};

/* The value of the body's "action" member: a plain scan for `"action"` and the string after it
 * (the bench's bodies are {"action":"showList"} and {"action":"pop"}). NULL when there is none. */
static const char *find_action(char *body, size_t *length) {
  const char *key = strstr(body, "\"action\"");
  const char *open = key ? strchr(key + 8, '"') : NULL;
  const char *close = open ? strchr(open + 1, '"') : NULL;
  if (!close) return NULL;
  *length = (size_t)(close - open - 1);
  return open + 1;
}

static enum MHD_Result answer_action(struct MHD_Connection *connection, struct upload *upload) {
  if (upload->too_large)
    return ANSWER_LITERAL(connection, MHD_HTTP_CONTENT_TOO_LARGE, "{\"error\":\"too large\"}");
  upload->bytes[upload->length] = 0;
  size_t name_length;
  const char *name = find_action(upload->bytes, &name_length);
  if (!name) return ANSWER_LITERAL(connection, MHD_HTTP_BAD_REQUEST, "{\"error\":\"bad action\"}");
  const char *cookie = MHD_lookup_connection_value(connection, MHD_COOKIE_KIND, cookie_name);
  int on_list = 0;
  enum outcome outcome = apply_action(cookie, name, name_length, &on_list);
  if (outcome == NO_SESSION)
    return ANSWER_LITERAL(connection, MHD_HTTP_FORBIDDEN, "{\"error\":\"no session\"}");
  if (outcome == DONE && store_path && store_write(cookie) != 0)
    return ANSWER_LITERAL(connection, MHD_HTTP_SERVICE_UNAVAILABLE, "{\"error\":\"store\"}");
  char json[JSON_HEAD + MAX_PAD];
  int length = snprintf(json, JSON_HEAD, "{\"screen\":\"%s\",\"stack\":[\"main\"%s],\"server\":\"c-reference\"",
                        on_list ? "list" : "main", on_list ? ",\"list\"" : "");
  size_t total = close_padded(json, (size_t)length, action_bytes);
  return answer(connection, outcome == DONE ? MHD_HTTP_OK : MHD_HTTP_CONFLICT, json, total, NULL);
}

/* --- libmicrohttpd's callbacks ------------------------------------------------------------- */

/* The request context of a request without a body worth keeping: its headers have been seen. */
static char headers_seen;

/* libmicrohttpd calls the handler once when a request's headers are in, then once per piece of
 * body, then once more with no body left. It is answered on that last call: an answer queued on
 * the first call counts as an early response and closes the connection (no keep-alive). */
static enum MHD_Result handle(void *unused, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **context) {
  (void)unused;
  (void)version;
  int is_action = strcmp(method, MHD_HTTP_METHOD_POST) == 0 && strcmp(url, "/api/actions") == 0;
  if (*context == NULL) {
    if (!is_action) {
      *context = &headers_seen;
      return MHD_YES;
    }
    struct upload *upload = malloc(sizeof *upload);
    if (!upload) return MHD_NO;
    upload->length = 0;
    upload->too_large = 0;
    *context = upload;
    return MHD_YES;
  }
  if (*upload_data_size != 0) { /* an action's body is kept, any other body dropped */
    if (is_action) {
      struct upload *upload = *context;
      if (upload->length + *upload_data_size < MAX_UPLOAD) {
        memcpy(upload->bytes + upload->length, upload_data, *upload_data_size);
        upload->length += *upload_data_size;
      } else {
        upload->too_large = 1;
      }
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (is_action) return answer_action(connection, *context);
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0)
    return ANSWER_LITERAL(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "{\"error\":\"method not allowed\"}");
  if (strcmp(url, "/api/state") == 0) return answer_state(connection);
  if (strcmp(url, "/api/stats") == 0) return answer_stats(connection);
  return ANSWER_LITERAL(connection, MHD_HTTP_NOT_FOUND, "{\"error\":\"not found\"}");
}

/* Frees an action's body when its request ends. */
static void request_ended(void *unused, struct MHD_Connection *connection, void **context,
                          enum MHD_RequestTerminationCode why) {
  (void)unused;
  (void)connection;
  (void)why;
  if (*context != &headers_seen) free(*context);
  *context = NULL;
}

/* --- start and stop ------------------------------------------------------------------------ */

/* The daemon flags of a mode, or 0 for an unknown mode; `pooled` tells whether THREADS applies. */
static unsigned mode_flags(const char *mode, int *pooled) {
  *pooled = 0;
  if (strcmp(mode, "pool") == 0) {
    *pooled = 1;
    return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
  }
  if (strcmp(mode, "single") == 0) return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
  if (strcmp(mode, "tpc") == 0)
    return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
  if (strcmp(mode, "auto") == 0) {
    *pooled = 1;
    return MHD_USE_AUTO_INTERNAL_THREAD;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 5) {
    fprintf(stderr, "usage: %s PORT [pool|single|tpc|auto [THREADS [TURBO]]]\n", argv[0]);
    return 2;
  }
  unsigned port = (unsigned)strtoul(argv[1], NULL, 10);
  const char *mode = argc > 2 ? argv[2] : "pool";
  unsigned threads = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 2;
  int turbo = argc > 4 && strcmp(argv[4], "1") == 0;
  int pooled;
  unsigned flags = mode_flags(mode, &pooled);
  if (!flags || port > 65535 || threads == 0) {
    fprintf(stderr, "c-reference: bad arguments (mode %s, port %u, threads %u)\n", mode, port,
            threads);
    return 2;
  }

  if (getenv("COOKIE_NAME") && *getenv("COOKIE_NAME")) cookie_name = getenv("COOKIE_NAME");
  body_bytes = env_size("BODY_BYTES", 0, MAX_PAD);
  action_bytes = env_size("ACTION_BYTES", 0, MAX_PAD);
  snapshot_bytes = env_size("SNAPSHOT_BYTES", 1024, 1 << 30);
  if (getenv("STORE") && *getenv("STORE")) {
    store_path = getenv("STORE");
    snapshot = malloc(snapshot_bytes ? snapshot_bytes : 1);
    if (!snapshot) return 1;
    memset(snapshot, 's', snapshot_bytes);
  }
  sessions_init();

  /* SIGINT and SIGTERM are blocked before libmicrohttpd starts its threads (which inherit the
   * mask), so that only sigwait below receives them. */
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);

  flags |= MHD_USE_ERROR_LOG;
  if (turbo) flags |= MHD_USE_TURBO;
  struct MHD_OptionItem options[10];
  int count = 0;
  if (pooled)
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL};
  const char *tls_cert = getenv("TLS_CERT"), *tls_key = getenv("TLS_KEY");
  int tls = tls_cert && *tls_cert && tls_key && *tls_key;
  if (tls) {
    /* kept until the process ends: libmicrohttpd reads them while the daemon runs */
    char *cert_pem = read_file(tls_cert), *key_pem = read_file(tls_key);
    if (!cert_pem || !key_pem) {
      fprintf(stderr, "c-reference: cannot read TLS_CERT %s or TLS_KEY %s\n", tls_cert, tls_key);
      return 1;
    }
    flags |= MHD_USE_TLS;
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, cert_pem};
    options[count++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, key_pem};
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)TLS_PRIORITIES};
  }
  size_t connection_limit = env_size("CONNECTION_LIMIT", 0, 1000000);
  if (connection_limit)
    options[count++] =
        (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL};
  size_t timeout = env_size("CONNECTION_TIMEOUT", 30, 86400);
  options[count++] =
      (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)(timeout ? timeout : 30), NULL};
  options[count++] =
      (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)request_ended, NULL};
  options[count++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons((uint16_t)port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *daemon =
      MHD_start_daemon(flags, (uint16_t)port, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR,
                       (struct sockaddr *)&address, MHD_OPTION_ARRAY, options, MHD_OPTION_END);
  if (!daemon) {
    fprintf(stderr, "c-reference: libmicrohttpd did not start (mode %s, %u threads)\n", mode,
            threads);
    return 1;
  }
  const union MHD_DaemonInfo *bound = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  printf("listening on %u mode=%s threads=%u turbo=%d store=%s tls=%d\n",
         bound ? bound->port : port, mode, pooled ? threads : 1, turbo,
         store_path ? store_path : "none", tls);
  fflush(stdout);

  int signal_number;
  sigwait(&stop_signals, &signal_number);
  MHD_stop_daemon(daemon);
  fprintf(stderr, "c-reference: stopped with %zu sessions\n", session_count());
  return 0;
}
