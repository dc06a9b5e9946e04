import type { ApiClass, ClassName } from './api.js';
import { gorillaFileSystem } from './gorillaFileSystem.js';
import { mathApi } from './mathApi.js';
import { memoryKv } from './memoryKv.js';
import { memoryRecSum } from './memoryRecSum.js';
import { memoryVector } from './memoryVector.js';
import { messageApi } from './messageApi.js';
import { ticketApi } from './ticketApi.js';
import { tradingBot } from './tradingBot.js';
import { travelApi } from './travelApi.js';
import { twitterApi } from './twitterApi.js';
import { vehicleControl } from './vehicleControl.js';
import { webSearch } from './webSearch.js';

/** The BFCL API classes by their Python class names: the 8 multi-turn ones and the 4 agentic ones. */
export const API_CLASSES: Readonly<Record<ClassName, ApiClass>> = {
  GorillaFileSystem: gorillaFileSystem,
  MathAPI: mathApi,
  MessageAPI: messageApi,
  TwitterAPI: twitterApi,
  TicketAPI: ticketApi,
  TradingBot: tradingBot,
  TravelAPI: travelApi,
  VehicleControlAPI: vehicleControl,
  MemoryAPI_kv: memoryKv,
  MemoryAPI_vector: memoryVector,
  MemoryAPI_rec_sum: memoryRecSum,
  WebSearchAPI: webSearch,
} as Readonly<Record<ClassName, ApiClass>>;
