"""Tic-tac-toe against a scripted opponent: the model plays X from an opening position through the `play` tool and
the env answers each move with O's reply.

The game lives on the env's side, one board per rollout (keyed by the rollout's task id), so the reward reads who
won from the game itself, never from what the model says. Win 1.0, draw 0.5, loss or unfinished game 0.0.
"""

from __future__ import annotations

import random
import threading

from atroposlib.envs.server_handling.server_manager import APIServerConfig

from environments.agent_loop import AgentResult, HermesAgentLoop
from environments.hermes_base_env import HermesAgentBaseEnv, HermesAgentEnvConfig
from environments.tool_context import ToolContext
from hermes_envs.tools import registry

SYSTEM_PROMPT = (
    "You play tic-tac-toe as X against a fixed opponent (O). Make your moves with the play tool "
    "(cells 1-9, row by row from the top left). When the game is over, say how it ended."
)
LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
O_PREFERENCE = [4, 0, 2, 6, 8, 1, 3, 5, 7]  # centre, corners, edges (0-based)

_GAMES: dict[str, dict] = {}
_LOCK = threading.Lock()


def winner(board: list[str]) -> str | None:
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def opponent_move(board: list[str]) -> int:
    """O's reply: win if it can, block X if it must, else the first free cell in its preference order."""
    free = [i for i in range(9) if board[i] == "."]
    for mark in ("O", "X"):
        for i in free:
            trial = board.copy()
            trial[i] = mark
            if winner(trial) == mark:
                return i
    return next(i for i in O_PREFERENCE if i in free)


def status(board: list[str]) -> str:
    w = winner(board)
    if w:
        return f"{w} wins"
    return "draw" if "." not in board else "in progress"


def render(board: list[str]) -> str:
    rows = [" ".join(board[r * 3 : r * 3 + 3]) for r in range(3)]
    return "\n".join(rows)


def _make_items() -> list[dict]:
    """Openings after one X and one O (X to move), a seeded sample of the 72."""
    openings = []
    for x in range(9):
        for o in range(9):
            if o != x:
                board = ["."] * 9
                board[x], board[o] = "X", "O"
                openings.append("".join(board))
    rng = random.Random(2024)
    chosen = rng.sample(openings, 16)
    return [{"game_id": f"g{i:02d}", "start": start} for i, start in enumerate(chosen)]


GAMES_BY_ID = {item["game_id"]: item for item in _make_items()}


def play(game_id: str, cell: int, task_id: str) -> str:
    """Place your X on a cell of the board; the opponent answers at once. Returns the board and the game status.

    Args:
        game_id: The id of your game (given in the task).
        cell: The cell to mark, 1-9, row by row from the top left (5 is the centre).
    """
    with _LOCK:
        game = _GAMES.get(task_id)
        if game is None:
            if game_id not in GAMES_BY_ID:
                return f"error: unknown game {game_id!r}"
            game = _GAMES[task_id] = {"game_id": game_id, "board": list(GAMES_BY_ID[game_id]["start"])}
        elif game["game_id"] != game_id:
            return f"error: you are playing game {game['game_id']}, not {game_id}"
        board = game["board"]
        if status(board) != "in progress":
            return f"error: the game is over ({status(board)})"
        if not 1 <= cell <= 9:
            return "error: cell must be 1-9"
        if board[cell - 1] != ".":
            return f"error: cell {cell} is taken\n{render(board)}"
        board[cell - 1] = "X"
        if status(board) == "in progress":
            board[opponent_move(board)] = "O"
        return f"{render(board)}\nstatus: {status(board)}"


def game_result(task_id: str) -> tuple[str | None, str]:
    """(game id, status) of the rollout's game ((None, "not started") when it never played), forgetting the game."""
    with _LOCK:
        game = _GAMES.pop(task_id, None)
    return (None, "not started") if game is None else (game["game_id"], status(game["board"]))


SCORES = {"X wins": 1.0, "draw": 0.5}


class TicTacToeEnv(HermesAgentBaseEnv):
    """A game with env-side state: the reward is the game's outcome, read from the env's own board."""

    name = "blind4-tictactoe"
    env_config_cls = HermesAgentEnvConfig

    @classmethod
    def config_init(cls) -> tuple[HermesAgentEnvConfig, list[APIServerConfig]]:
        config = HermesAgentEnvConfig(
            enabled_toolsets=["tictactoe"],
            max_agent_turns=8,
            agent_temperature=1.0,
            system_prompt=SYSTEM_PROMPT,
            group_size=8,
            total_steps=300,
            steps_per_eval=50,
            max_token_length=4096,
            tokenizer_name="NousResearch/Hermes-3-Llama-3.1-8B",
            wandb_name="blind4-tictactoe",
        )
        servers = [
            APIServerConfig(
                base_url="http://localhost:8000/v1",
                model_name="NousResearch/Hermes-3-Llama-3.1-8B",
                server_type="openai",
                api_key="x",
                health_check=False,
            )
        ]
        return config, servers

    async def setup(self) -> None:
        registry.tool(play, toolset="tictactoe")
        items = _make_items()
        self._eval_items = items[:4]
        self._items = items
        self._index = 0
        self._eval_metrics: list[tuple[str, float]] = []

    async def get_next_item(self) -> dict:
        item = self._items[self._index % len(self._items)]
        self._index += 1
        return item

    def format_prompt(self, item: dict) -> str:
        return (
            f"Game {item['game_id']}. You are X and it is your move. The board (. is empty):\n"
            f"{render(list(item['start']))}\n\nPlay with play(game_id={item['game_id']!r}, cell=1..9) until the "
            "game ends."
        )

    async def compute_reward(self, item: dict, result: AgentResult, ctx: ToolContext) -> float:
        game_id, outcome = game_result(ctx.task_id)
        if game_id != item["game_id"]:  # a win in another (easier) game than the one asked for is no win
            return 0.0
        return SCORES.get(outcome, 0.0)

    async def evaluate(self, *args, **kwargs) -> None:
        import time

        start = time.time()
        tools, names = self._resolve_tools_for_group()
        outcomes: dict[str, int] = {"win": 0, "draw": 0, "other": 0}
        for item in self._eval_items:
            loop = HermesAgentLoop(
                server=self.server,
                tool_schemas=tools,
                valid_tool_names=names,
                max_turns=self.config.max_agent_turns,
                temperature=0.0,
            )
            result = await loop.run(self.initial_messages(item))
            ctx = ToolContext(loop.task_id)
            try:
                score = await self.compute_reward(item, result, ctx)
            finally:
                ctx.cleanup()
            outcomes["win" if score == 1.0 else "draw" if score == 0.5 else "other"] += 1
        n = len(self._eval_items)
        metrics = {"eval/win_rate": outcomes["win"] / n, "eval/draw_rate": outcomes["draw"] / n}
        self._eval_metrics.extend(metrics.items())
        await self.evaluate_log(metrics=metrics, start_time=start, end_time=time.time())

    async def wandb_log(self, wandb_metrics: dict | None = None) -> None:
        wandb_metrics = dict(wandb_metrics or {})
        wandb_metrics.update(self._eval_metrics)
        self._eval_metrics = []
        await super().wandb_log(wandb_metrics)


if __name__ == "__main__":
    TicTacToeEnv.cli()
