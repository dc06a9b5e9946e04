import type { ApiClass, ClassName } from './api.js';
import { gorillaFileSystem } from './gorillaFileSystem.js';
import { mathApi } from './mathApi.js';
import { messageApi } from './messageApi.js';
import { ticketApi } from './ticketApi.js';
import { tradingBot } from './tradingBot.js';
import { travelApi } from './travelApi.js';
import { twitterApi } from './twitterApi.js';
import { vehicleControl } from './vehicleControl.js';

/** The 8 BFCL API classes by their Python class names. */
export const API_CLASSES: Readonly<Record<ClassName, ApiClass>> = {
  GorillaFileSystem: gorillaFileSystem,
  MathAPI: mathApi,
  MessageAPI: messageApi,
  TwitterAPI: twitterApi,
  TicketAPI: ticketApi,
  TradingBot: tradingBot,
  TravelAPI: travelApi,
  VehicleControlAPI: vehicleControl,
} as Readonly<Record<ClassName, ApiClass>>;
