"""Goldens for seal's chat renderers, made by the Tinker cookbook's own renderer modules.

Run:  python3 scripts/cookbook-goldens/goldens.py COOKBOOK_DIR > test/fixtures/renderers/cookbook-goldens.jsonl
where COOKBOOK_DIR is a checkout of github.com/thinking-machines-lab/tinker-cookbook (its
tinker_cookbook/ folder is imported as is). The committed fixture was made from commit 9dfcc3a2. No Python packages are needed: stubs/ stands in for
tinker, pydantic, torch, PIL and transformers, just far enough for the renderers to run.

The tokenizer is a character-level stand-in: each character is one id, each special-token string
one id, and every id carries a flag saying whether it starts a new encode() call. So a rendering
comes out as its text cut into the pieces the renderer encoded one by one; seal's tests encode each
piece with the family's real tokenizer and compare the ids with what seal's renderer produces.
"""

import json
import re
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0] + '/stubs')
sys.path.insert(0, sys.argv[1])

from tinker_cookbook import renderers  # noqa: E402
from tinker_cookbook.renderers.base import ToolCall  # noqa: E402

# added tokens a tokenizer matches whole; with split_special_tokens only the non-special ones (as
# in Qwen3's tokenizer, where <think> and <tool_call> are added but not special)
NOT_SPECIAL = r'</?think>|</?tool_call>|</?tool_response>'
SPECIAL = re.compile(r'<\|[A-Za-z0-9_:./\- ]+\|>|<｜[^｜]+｜>|\[/?[A-Z_]+\]|' + NOT_SPECIAL)
ADDED_NOT_SPECIAL = re.compile(NOT_SPECIAL)


class Tid(int):
    """a token id that remembers whether it starts an encode() call, and whether that call read
    special strings as text (split_special_tokens); it compares as the plain id, so the renderers'
    own checks (a prompt is a prefix of the full sequence, say) see ordinary ids"""

    def __new__(cls, value, start, split):
        t = super().__new__(cls, value)
        t.start = start
        t.split = split
        return t


class CharTokenizer:
    """ids: a code point, or 0x110000 + the index of a special string"""

    name_or_path = 'stand-in'
    bos_token = '<|begin_of_text|>'
    eos_token_id = None

    def __init__(self):
        self.specials = []
        self.special_ids = {}

    def _special(self, s):
        if s not in self.special_ids:
            self.special_ids[s] = 0x110000 + len(self.specials)
            self.specials.append(s)
        return self.special_ids[s]

    def encode(self, text, add_special_tokens=True, split_special_tokens=False):
        out = []
        pos = 0
        for m in (ADDED_NOT_SPECIAL if split_special_tokens else SPECIAL).finditer(text):
            out.extend(ord(c) for c in text[pos:m.start()])
            out.append(self._special(m.group(0)))
            pos = m.end()
        out.extend(ord(c) for c in text[pos:])
        return [Tid(x, i == 0, split_special_tokens) for i, x in enumerate(out)]

    def _text(self, x):
        x = int(x)
        return self.specials[x - 0x110000] if x >= 0x110000 else chr(x)

    def decode(self, ids, skip_special_tokens=False):
        return ''.join(self._text(x) for x in ids)

    def convert_tokens_to_ids(self, s):
        return self.encode(s)[0]

    def pieces(self, ids):
        """the text of each encode() call, in order; one encoded with special strings as text is
        written as {"text": ...} instead of a string"""
        out = []
        for x in ids:
            start = getattr(x, 'start', False)
            if start or not out:
                out.append(['', bool(getattr(x, 'split', False))])
            out[-1][0] += self._text(x)
        return [{'text': t} if split else t for t, split in out]


def tool(name, description, props, required):
    """a BFCL function as seal hands it to a model: the OpenAI form of src/envs/bfcl/tools.ts"""
    return {
        'name': name,
        'description': description,
        'parameters': {'type': 'object', 'properties': props, 'required': required},
    }


FLOAT = ' This is a float type value.'

TOOLS = [
    tool('cd', 'This tool belongs to the Gorilla file system. Change the current working directory.',
         {'folder': {'type': 'string', 'description': 'The folder to move into; "..", or a name.'}}, ['folder']),
    tool('grep', 'Search a file for lines containing a pattern.',
         {'file_name': {'type': 'string', 'description': 'The file to search.'},
          'pattern': {'type': 'string', 'description': 'The text to look for.'}}, ['file_name', 'pattern']),
    tool('place_order', 'Place an order for a stock. Prices are in USD.',
         {'order_type': {'type': 'string', 'enum': ['Buy', 'Sell'], 'description': 'Buy or Sell.'},
          'symbol': {'type': 'string', 'description': 'The ticker, e.g. "AAPL".'},
          'price': {'type': 'number', 'format': 'float', 'description': 'Price per share.' + FLOAT},
          'amount': {'type': 'integer', 'description': 'Number of shares.'}},
         ['order_type', 'symbol', 'price', 'amount']),
    tool('book_flight', 'Book a flight. Dates are "YYYY-MM-DD".',
         {'access_token': {'type': 'string', 'description': 'The token from authenticate.'},
          'travel_cost': {'type': 'number', 'format': 'float', 'description': 'Cost of the trip.' + FLOAT},
          'travel_date': {'type': 'string', 'description': 'The date.'},
          'passengers': {'type': 'array', 'items': {'type': 'string'}, 'description': 'Names.', 'default': []},
          'options': {'type': 'object', 'description': 'Seat and meal.',
                      'properties': {'seat': {'type': 'string', 'description': 'Seat class.'},
                                     'vegetarian': {'type': 'boolean', 'description': 'Meal choice.', 'default': False}},
                      'required': ['seat']}},
         ['access_token', 'travel_cost', 'travel_date']),
    tool('logout', 'End the session. Takes no arguments.', {}, []),
]


def call(id_, name, args):
    return ToolCall(id=id_, function=ToolCall.FunctionBody(name=name, arguments=json.dumps(args, ensure_ascii=False)))


def raw_call(id_, name, arguments):
    return ToolCall(id=id_, function=ToolCall.FunctionBody(name=name, arguments=arguments))


SYSTEM = 'You are a helpful assistant. Call tools when you need them; answer in plain text when done.'

CONVERSATIONS = {
    'one_call': [
        {'role': 'user', 'content': 'Go into the "documents" folder, then find lines with "budget" in report.txt.'},
        {'role': 'assistant', 'content': '', 'tool_calls': [call('functions.cd:0', 'cd', {'folder': 'documents'})]},
        {'role': 'tool', 'tool_call_id': 'functions.cd:0', 'name': 'cd', 'content': '{"current_working_directory": "documents"}'},
        {'role': 'assistant', 'content': '', 'tool_calls': [call('functions.grep:1', 'grep', {'file_name': 'report.txt', 'pattern': 'budget'})]},
        {'role': 'tool', 'tool_call_id': 'functions.grep:1', 'name': 'grep', 'content': '{"matching_lines": ["budget: 30.0k"]}'},
        {'role': 'assistant', 'content': 'One line matches: "budget: 30.0k".'},
    ],
    'parallel_numbers': [
        {'role': 'user', 'content': 'Buy 100 shares of AAPL at 30.0 and sell 1e21 of "ZZ\\Q" at 0.5.\nThanks!'},
        {'role': 'assistant', 'content': 'Placing both orders.', 'tool_calls': [
            raw_call('functions.place_order:0', 'place_order', '{"order_type": "Buy", "symbol": "AAPL", "price": 30.0, "amount": 100}'),
            raw_call('functions.place_order:1', 'place_order', '{"order_type": "Sell", "symbol": "ZZ\\\\Q", "price": 0.5, "amount": 1e21}'),
        ]},
        {'role': 'tool', 'tool_call_id': 'functions.place_order:0', 'name': 'place_order', 'content': '{"order_id": 12446, "status": "Pending"}'},
        {'role': 'tool', 'tool_call_id': 'functions.place_order:1', 'name': 'place_order', 'content': '{"error": "Invalid amount"}'},
        {'role': 'assistant', 'content': 'The AAPL order is pending (id 12446); the second failed: invalid amount.'},
    ],
    'unicode_reasoning': [
        {'role': 'user', 'content': 'Réserve un vol pour « Zoë » le 2024-11-15, coût 450.5 €. 東京へ!'},
        {'role': 'assistant', 'content': [
            {'type': 'thinking', 'thinking': 'The user wants a flight; I need the token first.\nIt is "abc123".'},
            {'type': 'text', 'text': ''},
        ], 'tool_calls': [call('functions.book_flight:0', 'book_flight', {'access_token': 'abc123', 'travel_cost': 450.5, 'travel_date': '2024-11-15', 'passengers': ['Zoë', '東京']})]},
        {'role': 'tool', 'tool_call_id': 'functions.book_flight:0', 'name': 'book_flight', 'content': '{"booking_id": "3426812", "transaction_id": "45451592"}'},
        {'role': 'assistant', 'content': [
            {'type': 'thinking', 'thinking': 'Booked.'},
            {'type': 'text', 'text': 'Réservé : vol 3426812.'},
        ]},
    ],
    'text_turns': [
        {'role': 'user', 'content': 'Hello'},
        {'role': 'assistant', 'content': 'Hi! What should I do?'},
        {'role': 'user', 'content': 'Nothing, thanks.\n\nBye'},
        {'role': 'assistant', 'content': 'Bye.'},
    ],
}

NAMES = [
    'role_colon', 'llama3', 'qwen3', 'qwen3_disable_thinking', 'qwen3_instruct', 'qwen3_5',
    'qwen3_5_disable_thinking', 'deepseekv3', 'deepseekv3_thinking', 'gpt_oss_no_sysprompt',
    'gpt_oss_low_reasoning', 'gpt_oss_medium_reasoning', 'gpt_oss_high_reasoning', 'kimi_k2',
    'kimi_k25', 'kimi_k25_disable_thinking', 'nemotron3', 'nemotron3_disable_thinking',
]


def plain(obj):
    """a parsed Message as JSON data"""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    if hasattr(obj, 'model_dump'):
        return plain(obj.model_dump())
    if hasattr(obj, 'value') and type(obj).__name__ == 'ParseTermination':
        return obj.value
    return obj


def emit(**kw):
    print(json.dumps(kw, ensure_ascii=False), flush=True)


def conversation_json(messages):
    out = []
    for m in messages:
        m = dict(m)
        if 'tool_calls' in m:
            m['tool_calls'] = [{'id': c.id, 'name': c.function.name, 'arguments': c.function.arguments}
                               for c in m['tool_calls']]
        out.append(m)
    return out


def main():
    import datetime
    emit(kind='setup', system=SYSTEM, tools=TOOLS, date=datetime.date.today().isoformat())
    for cname, convo in CONVERSATIONS.items():
        emit(kind='conversation', conversation=cname, messages=conversation_json(convo))
    for name in NAMES:
        tok = CharTokenizer()
        r = renderers.get_renderer(name, tok)
        stops = r.get_stop_sequences()
        emit(renderer=name, kind='info', extension=bool(r.has_extension_property),
             stop=[tok.decode([s]) if isinstance(s, int) else s for s in stops])
        for cname, convo in CONVERSATIONS.items():
            try:
                prefix = r.create_conversation_prefix_with_tools(TOOLS, SYSTEM)
            except Exception as e:  # llama3 declares no tools
                emit(renderer=name, kind='tools_error', conversation=cname, error=f'{type(e).__name__}: {e}')
                prefix = [{'role': 'system', 'content': SYSTEM}]
            emit(renderer=name, kind='prefix', conversation=cname, messages=conversation_json(prefix))
            messages = prefix + convo
            for i, m in enumerate(messages):
                if m['role'] != 'assistant':
                    continue
                try:
                    prompt = r.build_generation_prompt(messages[:i])
                    p_ids = prompt.to_ints()
                    full, weights = r.build_supervised_example(messages[: i + 1])
                    f_ids = full.to_ints()
                    # what the model writes after the prompt; a renderer whose full render does not
                    # start with its prompt (nemotron3, deepseekv3_thinking) gives its trained tokens
                    prefix_ok = f_ids[: len(p_ids)] == p_ids
                    completion = f_ids[len(p_ids):] if prefix_ok else [x for x, w in zip(f_ids, weights) if w > 0]
                    try:
                        parsed, term = r.parse_response(completion)
                        parse = {'parsed': plain(parsed), 'termination': plain(term)}
                    except Exception as e:
                        parse = {'parse_error': f'{type(e).__name__}: {e}'}
                    emit(renderer=name, kind='turn', conversation=cname, upto=i - len(prefix),
                         prefix_messages=len(prefix),
                         prompt=tok.pieces(p_ids), completion=tok.decode(completion),
                         supervised=tok.pieces(f_ids),
                         prompt_is_prefix=prefix_ok, **parse)
                except Exception as e:
                    emit(renderer=name, kind='turn_error', conversation=cname, upto=i - len(prefix),
                         error=f'{type(e).__name__}: {e}')


main()
