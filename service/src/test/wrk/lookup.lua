-- POST /interners/bench/lookup with 10 ids per request, drawn from IDS (set by http-bench.sh)
request = function()
  local ids = {}
  for i = 1, 10 do ids[i] = '"' .. IDS[math.random(1, #IDS)] .. '"' end
  return wrk.format("POST", "/interners/bench/lookup", {["Content-Type"] = "application/json"},
    '{"ids":[' .. table.concat(ids, ",") .. ']}')
end
