#!/usr/bin/env python3
"""An LLM agent in plain Python (no openai package: Debian's python3 has none) playing FrozenLake through
`trajflow gateway`'s OpenAI-compatible API, then posting each episode's reward. The gateway records every call
as a step with the exact token ids and log-probs of the reply (docs/guides/llm-agents.md).

    npx trajflow gateway --env FrozenLake --run-id py-agent &
    python3 examples/agents/frozenlake_agent.py [base_url] [episodes]

The puzzle is a 4x4 map written like trajflow's FrozenLake ('P' player, 'G' goal, 'O' hole, '_' ice), not
slippery; a reply names its moves as <answer>Left || Up</answer>.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:18090/v1"
EPISODES = int(sys.argv[2]) if len(sys.argv) > 2 else 4
RUN = "py-agent"
MAP = ["_G__", "_OO_", "____", "O__P"]
MOVES = {"Left": (0, -1), "Down": (1, 0), "Right": (0, 1), "Up": (-1, 0)}
SYSTEM = ("You are solving the FrozenLake puzzle. Avoid the holes and walk to the goal. "
          "Symbols: P player, _ frozen ice, O hole, G goal. Answer with <answer>Left || Up</answer>.")


def post(path, body, headers):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json", **headers})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def render(player):
    rows = [list(row.replace("P", "_")) for row in MAP]
    rows[player[0]][player[1]] = "P"
    return "\n".join("".join(row) for row in rows)


def play(episode, group):
    headers = {"x-trajflow-run": RUN, "x-trajflow-group": group, "x-trajflow-episode": episode, "x-trajflow-group-size": str(EPISODES)}
    player = (3, 3)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": render(player)}]
    for turn in range(5):
        answer = post("/chat/completions", {"model": "trajflow-policy", "messages": messages}, headers)
        reply = answer["choices"][0]["message"]["content"] or ""
        messages.append({"role": "assistant", "content": reply})
        found = re.search(r"<answer>(.*?)</answer>", reply, re.S)
        for move in (found.group(1).split("||") if found else [])[:5]:
            dr, dc = MOVES.get(move.strip(), (0, 0))
            player = (min(3, max(0, player[0] + dr)), min(3, max(0, player[1] + dc)))
            cell = MAP[player[0]][player[1]]
            if cell in "GO":
                won = cell == "G"
                return post("/episodes/%s/finish" % urllib.parse.quote(episode, safe=""),
                            {"reward": 1.0 if won else 0.0, "success": won, "terminated": True}, {"x-trajflow-run": RUN})
        messages.append({"role": "user", "content": render(player)})
    return post("/episodes/%s/finish" % urllib.parse.quote(episode, safe=""),
                {"reward": 0.0, "success": False, "truncated": True}, {"x-trajflow-run": RUN})


if __name__ == "__main__":
    results = [play("%s-e%d" % (RUN, i), RUN + "-g0") for i in range(EPISODES)]
    print(json.dumps(results))
