-- POST /interners/bench/intern with 10 new strings per request
counter = 0
request = function()
  counter = counter + 1
  local id = tostring(math.random(1, 1000000000)) .. "-" .. counter
  local parts = {}
  for i = 1, 10 do parts[i] = '"s-' .. id .. '-' .. i .. '"' end
  local body = '{"strings":[' .. table.concat(parts, ",") .. ']}'
  return wrk.format("POST", "/interners/bench/intern", {["Content-Type"] = "application/json"}, body)
end
