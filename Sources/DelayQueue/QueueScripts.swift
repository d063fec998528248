import Redis

/// The Lua scripts of the queue. `KEYS` are always `QueueKeys.all`: 1 due, 2 data, 3 leased, 4 state, 5 dead,
/// 6 deadinfo, 7 seq, 8 parked (due jobs of paused kinds), 9 paused (kind → since|reason). Times are epoch milliseconds from Redis `TIME`. Renaming a script's version forces a reload.
enum QueueScripts {
    static let version = "v4"

    private static let prelude = """
        -- countdown delay queue \(version)
        local function now_ms()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        end
        local function chunked(command, key, list)
          local n = #list
          local i = 1
          while i <= n do
            local j = math.min(i + 999, n)
            redis.call(command, key, unpack(list, i, j))
            i = j + 1
          end
        end
        local function parse_state(s)
          if not s then return 0, '', '' end
          local a, t, e = string.match(s, '^(%d+)|([^|]*)|(.*)$')
          if not a then return 0, '', '' end
          return tonumber(a), t, e
        end
        local function head_score(key)
          local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
          if head[2] then return tonumber(head[2]) end
          return nil
        end
        local function kind_of(blob)
          if not blob then return nil end
          local nul = string.find(blob, '\\0', 1, true)
          if not nul then return nil end
          return string.sub(blob, 1, nul - 1)
        end
        -- ARGV: wake channel, then ids. Makes each id that `accept(id, now)` lets through due now; returns how many.
        local function make_due_now(accept)
          local now = now_ms()
          local moved = 0
          for i = 2, #ARGV do
            if accept(ARGV[i], now) then
              redis.call('ZADD', KEYS[1], now, ARGV[i])
              moved = moved + 1
            end
          end
          if moved > 0 then redis.call('PUBLISH', ARGV[1], now) end
          return moved
        end
        local function bury(id, attempts, now, reason)
          redis.call('ZREM', KEYS[3], id)
          redis.call('ZADD', KEYS[5], now, id)
          redis.call('HSET', KEYS[6], id, attempts .. '|' .. now .. '|' .. reason)
          redis.call('HDEL', KEYS[4], id)
        end

        """

    /// ARGV: wake channel, then (id, 'a'|'r', absolute-or-relative ms, data) per job. Returns the count.
    static let enqueue = script("enqueue", """
        local now = now_ms()
        local head = head_score(KEYS[1])
        local scored, fields, ids = {}, {}, {}
        local earliest = nil
        for i = 2, #ARGV, 4 do
          local id = ARGV[i]
          local due = tonumber(ARGV[i + 2])
          if ARGV[i + 1] == 'r' then due = now + due end
          scored[#scored + 1] = due
          scored[#scored + 1] = id
          fields[#fields + 1] = id
          fields[#fields + 1] = ARGV[i + 3]
          ids[#ids + 1] = id
          if not earliest or due < earliest then earliest = due end
        end
        chunked('ZADD', KEYS[1], scored)
        local added = 0
        for i = 1, #fields, 1000 do
          added = added + redis.call('HSET', KEYS[2], unpack(fields, i, math.min(i + 999, #fields)))
        end
        if added < #ids then
          chunked('ZREM', KEYS[3], ids)
          chunked('HDEL', KEYS[4], ids)
          if redis.call('EXISTS', KEYS[8]) == 1 then chunked('ZREM', KEYS[8], ids) end
        end
        if redis.call('EXISTS', KEYS[5]) == 1 then
          chunked('ZREM', KEYS[5], ids)
          chunked('HDEL', KEYS[6], ids)
        end
        if earliest and (not head or earliest < head) then redis.call('PUBLISH', ARGV[1], earliest) end
        return #ids
        """)

    /// ARGV: max, lease ms, max attempts. Returns {now, next wake or -1, token, then (id, attempt, due, data) per job;
    /// a corrupt job has a negative attempt and its reason instead of data}. Due jobs of paused kinds met on the
    /// way are moved to the parked set (at most 5,000 per call, so a long backlog never blocks Redis for long).
    /// KEYS[10], when given, is the claimer's claim log: a sorted set of `attempt|token|id` by token (an hour's
    /// expiry), so the fleet can hand the jobs back if the claimer dies before it publishes its leases.
    static let claim = script("claim", """
        local now = now_ms()
        local max = tonumber(ARGV[1])
        local lease_ms = tonumber(ARGV[2])
        local max_attempts = tonumber(ARGV[3])
        local expired = redis.call('ZRANGE', KEYS[3], '-inf', now, 'BYSCORE', 'LIMIT', 0, 1000)
        if #expired > 0 then
          redis.call('ZREMRANGEBYRANK', KEYS[3], 0, #expired - 1)
          local states = redis.call('HMGET', KEYS[4], unpack(expired))
          for i, id in ipairs(expired) do
            local a, _, e = parse_state(states[i])
            if a >= max_attempts then
              bury(id, a, now, 'lease expired on the last attempt' .. (e ~= '' and (' (last error: ' .. e .. ')') or ''))
            else
              redis.call('ZADD', KEYS[1], now, id)
              redis.call('HSET', KEYS[4], id, a .. '||lease expired')
            end
          end
        end
        local out = {now, -1, ''}
        local paused = {}
        local any_paused = false
        for _, kind in ipairs(redis.call('HKEYS', KEYS[9])) do
          paused[kind] = true
          any_paused = true
        end
        -- ARGV[4..]: kind, limit pairs: at most limit jobs of that kind in this claim; the rest stay due.
        local limits, any_limit = {}, false
        for i = 4, #ARGV, 2 do
          limits[ARGV[i]] = tonumber(ARGV[i + 1])
          any_limit = true
        end
        local over = {}
        local ids, dues, blobs = {}, {}, {}
        local held = 0
        while #ids < max and held < 5000 do
          local taken = redis.call('ZRANGE', KEYS[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, max - #ids, 'WITHSCORES')
          local n = #taken / 2
          if n == 0 then break end
          redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - 1)
          local page = {}
          for i = 1, n do page[i] = taken[2 * i - 1] end
          local found = redis.call('HMGET', KEYS[2], unpack(page))
          for i = 1, n do
            local kind = kind_of(found[i])
            if kind and paused[kind] then
              redis.call('ZADD', KEYS[8], taken[2 * i], page[i])
              held = held + 1
            elseif kind and limits[kind] and limits[kind] <= 0 then
              over[#over + 1] = taken[2 * i]; over[#over + 1] = page[i]
              held = held + 1
            else
              if kind and limits[kind] then limits[kind] = limits[kind] - 1 end
              ids[#ids + 1] = page[i]; dues[#dues + 1] = tonumber(taken[2 * i]); blobs[#blobs + 1] = found[i]
            end
          end
          if not any_paused and not any_limit then break end
        end
        for i = 1, #over, 1000 do
          redis.call('ZADD', KEYS[1], unpack(over, i, math.min(i + 999, #over)))
        end
        local n = #ids
        if n > 0 then
          local token = tostring(redis.call('INCR', KEYS[7]))
          out[3] = token
          local states = redis.call('HMGET', KEYS[4], unpack(ids))
          local expiry = now + lease_ms
          local leases, fields, log = {}, {}, {}
          for i = 1, n do
            local id = ids[i]
            local blob = blobs[i]
            local a, _, e = parse_state(states[i])
            a = a + 1
            local due = dues[i]
            local k = #out
            if blob and string.find(blob, '\\0', 1, true) then
              leases[#leases + 1] = expiry
              leases[#leases + 1] = id
              fields[#fields + 1] = id
              fields[#fields + 1] = a .. '|' .. token .. '|' .. e
              if KEYS[10] then
                log[#log + 1] = token
                log[#log + 1] = a .. '|' .. token .. '|' .. id
              end
              out[k + 1] = id; out[k + 2] = a; out[k + 3] = due; out[k + 4] = blob
            else
              local reason = blob and 'stored data is not in the queue format' or 'stored data is missing'
              bury(id, a, now, reason)
              out[k + 1] = id; out[k + 2] = -a; out[k + 3] = due; out[k + 4] = reason
            end
          end
          if #leases > 0 then
            redis.call('ZADD', KEYS[3], unpack(leases))
            redis.call('HSET', KEYS[4], unpack(fields))
          end
          if #log > 0 then
            redis.call('ZADD', KEYS[10], unpack(log))
            redis.call('PEXPIRE', KEYS[10], 3600000)
          end
        end
        local next_due = head_score(KEYS[1])
        local next_lease = head_score(KEYS[3])
        local wake = next_due
        if next_lease and (not wake or next_lease < wake) then wake = next_lease end
        if wake then out[2] = wake end
        return out
        """)

    /// ARGV: (id, token) pairs. Returns how many leases were current.
    static let ack = script("ack", """
        local ids = {}
        for i = 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
        local states = redis.call('HMGET', KEYS[4], unpack(ids))
        local done = {}
        for i, id in ipairs(ids) do
          local s = states[i]
          if s then
            local token = ARGV[2 * i]
            local bar = string.find(s, '|', 1, true)
            if bar and string.sub(s, bar + 1, bar + #token + 1) == token .. '|' then done[#done + 1] = id end
          end
        end
        if #done > 0 then
          redis.call('ZREM', KEYS[3], unpack(done))
          redis.call('HDEL', KEYS[2], unpack(done))
          redis.call('HDEL', KEYS[4], unpack(done))
        end
        return #done
        """)

    /// ARGV: id, token, 'retry'|'postpone'|'dead', delay ms, error, wake channel. Returns 0 stale, 1 retrying, 2 dead.
    /// 'postpone' gives the attempt back (the job did not really run).
    static let release = script("release", """
        local id, token = ARGV[1], ARGV[2]
        local s = redis.call('HGET', KEYS[4], id)
        local a, t = parse_state(s)
        if not s or t == '' or t ~= token then return 0 end
        local now = now_ms()
        if ARGV[3] == 'dead' then
          bury(id, a, now, ARGV[5])
          return 2
        end
        if ARGV[3] == 'postpone' and a > 0 then a = a - 1 end
        local due = now + tonumber(ARGV[4])
        local head = head_score(KEYS[1])
        redis.call('ZREM', KEYS[3], id)
        redis.call('ZADD', KEYS[1], due, id)
        redis.call('HSET', KEYS[4], id, a .. '||' .. ARGV[5])
        if not head or due < head then redis.call('PUBLISH', ARGV[6], due) end
        return 1
        """)

    /// ARGV: id, token, lease ms. Returns the new expiry, or 0 when the lease is stale.
    static let extend = script("extend", """
        local s = redis.call('HGET', KEYS[4], ARGV[1])
        local _, t = parse_state(s)
        if not s or t == '' or t ~= ARGV[2] then return 0 end
        local expiry = now_ms() + tonumber(ARGV[3])
        redis.call('ZADD', KEYS[3], 'XX', expiry, ARGV[1])
        return expiry
        """)

    /// ARGV: ids. Removes them everywhere; returns how many existed.
    static let cancel = script("cancel", """
        local removed = redis.call('ZREM', KEYS[1], unpack(ARGV)) + redis.call('ZREM', KEYS[3], unpack(ARGV))
          + redis.call('ZREM', KEYS[5], unpack(ARGV)) + redis.call('ZREM', KEYS[8], unpack(ARGV))
        redis.call('HDEL', KEYS[2], unpack(ARGV))
        redis.call('HDEL', KEYS[4], unpack(ARGV))
        redis.call('HDEL', KEYS[6], unpack(ARGV))
        return removed
        """)

    /// ARGV: wake channel, then ids. Waiting jobs due later become due now (leased, parked, dead or missing ids are
    /// left alone; attempts are kept); returns how many moved.
    static let advance = script("advance", """
        return make_due_now(function(id, now)
          local due = redis.call('ZSCORE', KEYS[1], id)
          return due and tonumber(due) > now and not redis.call('ZSCORE', KEYS[3], id)
        end)
        """)

    /// ARGV: wake channel, then ids. Dead letters back to waiting, due now, attempts reset; returns how many.
    static let redrive = script("redrive", """
        return make_due_now(function(id, now)
          if redis.call('ZREM', KEYS[5], id) == 0 then return false end
          redis.call('HDEL', KEYS[6], id)
          redis.call('HDEL', KEYS[4], id)
          return true
        end)
        """)

    /// ARGV: ids. Deletes dead letters with their data; returns how many.
    static let drop = script("drop", """
        local dropped = 0
        for _, id in ipairs(ARGV) do
          if redis.call('ZREM', KEYS[5], id) == 1 then
            redis.call('HDEL', KEYS[6], id)
            redis.call('HDEL', KEYS[2], id)
            redis.call('HDEL', KEYS[4], id)
            dropped = dropped + 1
          end
        end
        return dropped
        """)

    /// ARGV: limit. Returns (id, deadinfo, data) per dead letter, oldest first.
    static let deadLetters = script("dead", """
        local ids = redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[1]) - 1)
        if #ids == 0 then return {} end
        local infos = redis.call('HMGET', KEYS[6], unpack(ids))
        local blobs = redis.call('HMGET', KEYS[2], unpack(ids))
        local out = {}
        for i, id in ipairs(ids) do
          out[#out + 1] = id; out[#out + 1] = infos[i] or ''; out[#out + 1] = blobs[i] or false
        end
        return out
        """)

    /// Returns {now, delayed, due now (parked included), leased, dead, oldest claimable due ms or -1, parked}.
    static let stats = script("stats", """
        local now = now_ms()
        local due_now = redis.call('ZCOUNT', KEYS[1], '-inf', now)
        local delayed = redis.call('ZCARD', KEYS[1]) - due_now
        local parked = redis.call('ZCARD', KEYS[8])
        local head = head_score(KEYS[1])
        local oldest = -1
        if head and head <= now then oldest = head end
        return {now, delayed, due_now + parked, redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[5]), oldest, parked}
        """)

    /// ARGV: HSCAN cursor, COUNT hint. One step over the data hash: the next cursor, then kind, count pairs of the
    /// jobs seen (the kind is the data's prefix up to NUL). Reads only.
    static let countByKind = script("countbykind", """
        local reply = redis.call('HSCAN', KEYS[2], ARGV[1], 'COUNT', ARGV[2])
        local entries, counts, out = reply[2], {}, {reply[1]}
        for i = 2, #entries, 2 do
          local stop = string.find(entries[i], '\\0', 1, true)
          if stop then
            local kind = string.sub(entries[i], 1, stop - 1)
            counts[kind] = (counts[kind] or 0) + 1
          end
        end
        for kind, n in pairs(counts) do
          out[#out + 1] = kind
          out[#out + 1] = n
        end
        return out
        """)

    /// ARGV: reason, then kinds. Marks the kinds paused (claim holds their due jobs aside).
    static let pause = script("pause", """
        local now = now_ms()
        for i = 2, #ARGV do redis.call('HSET', KEYS[9], ARGV[i], now .. '|' .. ARGV[1]) end
        return #ARGV - 1
        """)

    /// ARGV: wake channel, then kinds (none: every kind). Unpauses them and moves their held jobs back to waiting
    /// with their due times; returns how many moved.
    static let resume = script("resume", """
        if #ARGV == 1 then
          redis.call('DEL', KEYS[9])
        else
          redis.call('HDEL', KEYS[9], unpack(ARGV, 2))
        end
        local still = {}
        for _, kind in ipairs(redis.call('HKEYS', KEYS[9])) do still[kind] = true end
        local held = redis.call('ZRANGE', KEYS[8], 0, -1, 'WITHSCORES')
        local moved, earliest = 0, nil
        for i = 1, #held, 2 do
          local id = held[i]
          local kind = kind_of(redis.call('HGET', KEYS[2], id))
          if not kind or not still[kind] then
            local due = tonumber(held[i + 1])
            redis.call('ZREM', KEYS[8], id)
            redis.call('ZADD', KEYS[1], due, id)
            moved = moved + 1
            if not earliest or due < earliest then earliest = due end
          end
        end
        if earliest then redis.call('PUBLISH', ARGV[1], earliest) end
        return moved
        """)

    /// ARGV: ids. Returns per id: {due or false, lease expiry or false, dead-at or false, data, state, deadinfo}.
    static let inspect = script("inspect", """
        local due = redis.call('ZMSCORE', KEYS[1], unpack(ARGV))
        local parked = redis.call('ZMSCORE', KEYS[8], unpack(ARGV))
        local leased = redis.call('ZMSCORE', KEYS[3], unpack(ARGV))
        local dead = redis.call('ZMSCORE', KEYS[5], unpack(ARGV))
        local blobs = redis.call('HMGET', KEYS[2], unpack(ARGV))
        local states = redis.call('HMGET', KEYS[4], unpack(ARGV))
        local infos = redis.call('HMGET', KEYS[6], unpack(ARGV))
        local out = {}
        for i = 1, #ARGV do
          out[#out + 1] = due[i] or parked[i] or false; out[#out + 1] = leased[i] or false; out[#out + 1] = dead[i] or false
          out[#out + 1] = blobs[i] or false; out[#out + 1] = states[i] or false; out[#out + 1] = infos[i] or false
        end
        return out
        """)

    private static func script(_ name: String, _ body: String) -> RedisScript {
        RedisScript(name: "delayqueue.\(name).\(version)", source: prelude + body)
    }
}
