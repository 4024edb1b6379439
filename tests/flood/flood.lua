-- wrk script for `tests/flood/run.py`: cookieless requests across every route, round robin,
-- each thread stopping after its share (the first script argument) and then writing a file
-- `<second argument>.<thread>` (wrk itself waits for its -d duration: the runner interrupts it
-- once every thread's file is there); `done` prints one line, `FLOOD {json}`, with the answers by
-- status class and wrk's socket errors.

local routes = {
  {"GET", "/"}, {"GET", "/login"}, {"GET", "/main"}, {"GET", "/main/list"}, {"GET", "/main/second"},
  {"GET", "/login?next=%2Fmain%2Flist"}, {"GET", "/?launch=notification"},
  {"GET", "/api/state"}, {"GET", "/api/events"},
  {"POST", "/api/actions", '{"action":"pop"}', "application/json"},
  {"POST", "/api/actions", '{"action":"login","username":"demo"}', "application/json"},
  {"POST", "/actions", "action=pop", "application/x-www-form-urlencoded"},
  {"GET", "/healthz"}, {"GET", "/metrics"}, {"GET", "/api/openapi.json"},
  {"GET", "/app.css"}, {"GET", "/app.js"}, {"GET", "/splash.svg"}, {"GET", "/no/such/page"},
  {"DELETE", "/api/state"},
}

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function init(args)
  limit = tonumber(args[1]) or 1000
  marker = args[2]
  count, index = 0, 0
  s2, s3, s4, s5 = 0, 0, 0, 0
  prepared = {}
  for i, route in ipairs(routes) do
    local headers = {}
    if route[4] then headers["Content-Type"] = route[4] end
    prepared[i] = wrk.format(route[1], route[2], headers, route[3])
  end
end

function request()
  index = index % #prepared + 1
  return prepared[index]
end

function response(status, headers, body)
  count = count + 1
  if status >= 500 then s5 = s5 + 1
  elseif status >= 400 then s4 = s4 + 1
  elseif status >= 300 then s3 = s3 + 1
  else s2 = s2 + 1 end
  if count == limit then
    if marker then
      local file = io.open(marker .. "." .. id, "w")
      file:write(count)
      file:close()
    end
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local total = {count = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0}
  for _, thread in ipairs(threads) do
    for key, _ in pairs(total) do total[key] = total[key] + (thread:get(key) or 0) end
  end
  local errors = summary.errors
  io.write(string.format(
    'FLOOD {"responses":%d,"s2xx":%d,"s3xx":%d,"s4xx":%d,"s5xx":%d,"connect_errors":%d,"read_errors":%d,' ..
    '"write_errors":%d,"timeouts":%d,"seconds":%.3f,"p50_ms":%.3f,"p99_ms":%.3f}\n',
    total.count, total.s2, total.s3, total.s4, total.s5, errors.connect, errors.read, errors.write,
    errors.timeout, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
