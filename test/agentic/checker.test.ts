/**
 * The agentic checker against verdicts computed by the reference's own `agentic_checker` (Python
 * 3.11, gorilla at the pinned commit) on responses chosen where Python's and JavaScript's regular
 * expressions part ways: word boundaries next to non-ASCII letters and numbers, case folding,
 * punctuation the standardisation removes, several possible answers.
 */
import { describe, expect, it } from 'vitest';
import {
  checkAgenticResult,
  searchAtWordBoundaries,
  standardize,
} from '../../src/envs/bfcl/agentic/checker.js';

/** [response, possible answers, the reference's verdict] */
const CASES: readonly [string, readonly string[], boolean][] = [
  ["{'answer': 'Michael', 'context': 'You told me.'}", ['Michael'], true],
  ["{'answer': 'Michaelson', 'context': ''}", ['Michael'], false],
  ["{'answer': 'Ashiya, Hyōgo', 'context': 'birthplace'}", ['Ashiya, Hyōgo', 'Ashiya'], true],
  ["{'answer': 'Hyōgoken'}", ['Hyōgo'], false],
  ["{'answer': 'Elke Büdenbender'}", ['Elke Büdenbender', 'Elke Budenbender'], true],
  ["{'answer': 'ElkeBüdenbender'}", ['Elke Büdenbender'], false],
  ['It was the ČSSR until 1990.', ['Czechoslovakia', 'ČSSR'], true],
  ['It was the ČSSRx.', ['ČSSR'], false],
  ['It cost $222 million.', ['$222 million'], false],
  ['It cost $222 million.', ['$222 million', '222 million'], true],
  ['He is 6 ft 0 in tall.', ['1.82', '6 ft 0 in'], true],
  ['He measures 1.82 m', ['1.82'], true],
  ['He measures 182 cm', ['1.82'], true],
  ["{'answer': 'cafés'}", ['café'], false],
  ["{'answer': 'naïveté'}", ['naïve'], false],
  ["{'answer': 'Predrag Puharića'}", ['Predrag Puharić'], false],
  ["{'answer': 'Predrag Puharić'}", ['Predrag Puharić'], true],
  ['They won 17 games', ['7', 'seven'], false],
  ['They won 7th place', ['7'], false],
  ['They won seven.', ['7', 'seven'], true],
  ['my field is machine_learning', ['Machine learning'], false],
  ['my field is Machine Learning.', ['Machine learning', 'ML'], true],
  ["Finneas O'Connell wrote it", ["Finneas O'Connell"], true],
  ['Finneas O’Connell wrote it', ["Finneas O'Connell"], false],
  ['Finneas O"Connell wrote it', ["Finneas O'Connell"], true],
  ['ΟΔΥΣΣΕΥΣ', ['Οδυσσευς'], true],
  ['un été', ['e'], true],
  ['x 2² y', ['2'], false],
  ['「東京」に住む', ['東京'], true],
  ['東京都に住む', ['東京'], false],
  ['Usher (musician) performed', ['Usher (musician)'], true],
  ['ok', ['...'], true],
  ['!!!', ['...'], false],
  ['', ['...'], false],
  ['x𝐀bc', ['𝐀bc'], false],
  ['-𝐀bc', ['𝐀bc'], true],
  ['it is 5 K', ['5 k'], true],
  ['STRASSE', ['Straße'], false],
  ['I am thirty-five', ['35', 'thirty five'], false],
  ['I am thirty five years old', ['35', 'thirty five'], true],
  ['the answer is a^b*c', ['abc'], true],
  ['see a/b/c.', ['abc'], true],
  ['İstanbul', ['Istanbul'], false],
  ['i̇stanbul', ['İstanbul'], true],
  ['Ångström', ['Ångström'], true],
  ['über_alles', ['über'], false],
  ['x_7', ['7'], false],
  ['7_x', ['7'], false],
  ['a١٢٣', ['١٢٣'], false],
  ['the ١٢٣ day', ['١٢٣'], true],
  ['Ⅻ chapters', ['xii'], false],
  ['ⅻ', ['ⅻ'], true],
  ['aⅻ', ['ⅻ'], false],
];

/** [response, the reference's standardize_string] */
const STANDARDIZED: readonly [string, string][] = [
  ["{'answer': 'Michael', 'context': 'You told me.'}", '{"answer": "michael" "context": "you told me"}'],
  ["{'answer': 'Michaelson', 'context': ''}", '{"answer": "michaelson" "context": ""}'],
  [
    "{'answer': 'Ashiya, Hyōgo', 'context': 'birthplace'}",
    '{"answer": "ashiya hyōgo" "context": "birthplace"}',
  ],
  ["{'answer': 'Hyōgoken'}", '{"answer": "hyōgoken"}'],
  ["{'answer': 'Elke Büdenbender'}", '{"answer": "elke büdenbender"}'],
  ["{'answer': 'ElkeBüdenbender'}", '{"answer": "elkebüdenbender"}'],
  ['It was the ČSSR until 1990.', 'it was the čssr until 1990'],
  ['It was the ČSSRx.', 'it was the čssrx'],
  ['It cost $222 million.', 'it cost $222 million'],
  ['It cost $222 million.', 'it cost $222 million'],
  ['He is 6 ft 0 in tall.', 'he is 6 ft 0 in tall'],
  ['He measures 1.82 m', 'he measures 182 m'],
];

describe('agentic checker', () => {
  it.each(CASES)('%j in %j -> %s', (response, answers, valid) => {
    const r = checkAgenticResult([[response]], answers);
    expect(r.valid).toBe(response === '' ? false : valid);
  });

  it('standardises as the reference does', () => {
    for (const [s, want] of STANDARDIZED) expect(standardize(s)).toBe(want);
  });

  it('is not the JavaScript \\b, which would pass a letter glued to a non-ASCII letter', () => {
    expect(/\bcafé\b/.test('cafés')).toBe(true);
    expect(searchAtWordBoundaries('café', 'cafés')).toBe(false);
  });

  it('takes the last step that is not a tool call, as the reference does', () => {
    const call = [{ memory_retrieve: '{}' }];
    expect(checkAgenticResult([["{'answer': 'Michael'}", call]], ['Michael']).valid).toBe(true);
    expect(checkAgenticResult([[call, "{'answer': 'Michaelson'}"]], ['Michael']).errorType).toBe(
      'agentic:answer_not_found',
    );
    expect(
      checkAgenticResult([["{'answer': 'Michael'}", call, "{'answer': 'Bob'}"]], ['Michael']).valid,
    ).toBe(false);
    expect(checkAgenticResult([[call, '']], ['Michael']).errorType).toBe('agentic:no_last_message');
    // an FC step that decodes to no call is the last message; an empty one is falsy
    expect(checkAgenticResult([["{'answer': 'Michael'}", {}]], ['Michael']).errorType).toBe(
      'agentic:no_last_message',
    );
    expect(checkAgenticResult([[call]], ['Michael']).errorType).toBe('agentic:no_last_message');
    expect(checkAgenticResult([['x'], ['y']], ['x']).errorType).toBe('agentic:inference_error');
    expect(checkAgenticResult('Error during inference: boom', ['x']).errorType).toBe(
      'agentic:inference_error',
    );
    // prompting-style call text and seal's call-string lists are tool calls, not answers
    expect(checkAgenticResult([["{'answer': 'Michael'}", '[memory_retrieve()]']], ['Michael']).valid).toBe(
      true,
    );
    expect(checkAgenticResult([["{'answer': 'Michael'}", ['memory_retrieve()']]], ['Michael']).valid).toBe(
      true,
    );
    // a response given as a list of strings is its first string, as in the reference
    expect(checkAgenticResult([[['Michael', 'x']]], ['Michael']).valid).toBe(true);
  });
});
